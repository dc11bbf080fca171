/* flash.c -- one-time messages after a redirect; see flash.h. */
#include <string.h>

#include "web/flash.h"

static const struct {
	const char	*code, *text;
} msgs[FLASH__MAX] = {
	[FLASH_NONE] = { "", "" },
	[FLASH_NAME_SAVED] = { "name-saved", "Your name is saved." },
	[FLASH_PASSWORD_SAVED] = { "password-saved", "Your password is "
	    "changed; every other session of your account has ended." },
	[FLASH_NOTICE_SENT] = { "notice-sent", "Notice sent to everyone." },
	[FLASH_RED_DOT] = { "red-dot", "The red dot is lit for everyone." },
	[FLASH_FOLLOWED] = { "followed", "Followed." },
	[FLASH_UNFOLLOWED] = { "unfollowed", "Unfollowed." },
	[FLASH_DRAFT_SAVED] = { "draft-saved", "Saved as a draft: only you "
	    "can see it until you publish it." },
	[FLASH_PUBLISHED] = { "published", "Published." },
};

enum flash
flash_parse(const char *v)
{
	int i;

	for (i = FLASH_NONE + 1; v != NULL && i < FLASH__MAX; i++)
		if (strcmp(v, msgs[i].code) == 0)
			return (enum flash)i;
	return FLASH_NONE;
}

const char *
flash_code(enum flash f)
{
	return f > FLASH_NONE && f < FLASH__MAX ? msgs[f].code : "";
}

const char *
flash_text(enum flash f)
{
	return f > FLASH_NONE && f < FLASH__MAX ? msgs[f].text : "";
}
