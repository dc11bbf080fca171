/* flash.h -- a message shown once, on the page an action's redirect
 * leads to ("Notice sent.", "Saved as a draft."), without JavaScript.
 *
 * The action sets a short-lived cookie naming one of the messages below
 * (never text of its own: nothing a request carries reaches the page);
 * the next page that renders a header takes it: shows the message as
 * <p class="flash" role="status" data-flash="CODE"> and clears the
 * cookie, so a reload does not show it again.  A page showing one sets a
 * cookie of its own, so it is never kept whole (web/keep.h).
 */
#ifndef TALLY_FLASH_H
#define TALLY_FLASH_H


enum flash {
	FLASH_NONE,
	FLASH_NAME_SAVED,	/* /settings: the display name */
	FLASH_PASSWORD_SAVED,	/* /settings: the password */
	FLASH_NOTICE_SENT,	/* /admin/notices */
	FLASH_RED_DOT,		/* /admin/red-dot */
	FLASH_FOLLOWED,		/* a follow from a list, without script */
	FLASH_UNFOLLOWED,
	FLASH_DRAFT_SAVED,	/* a post saved unpublished */
	FLASH_PUBLISHED,	/* a post published */
	FLASH__MAX
};

#define FLASH_COOKIE	"flash"
#define FLASH_MAX_AGE	60	/* s: a redirect not followed at once */

/* The message a cookie's value names (FLASH_NONE: none, or unknown).
 * An action sets it with resp_flash() before its 303; route.c takes it
 * (and clears the cookie) before a page's load, into r->flash. */
enum flash	 flash_parse(const char *cookie);
/* A message's code (data-flash, the cookie's value) and its text. */
const char	*flash_code(enum flash);
const char	*flash_text(enum flash);

#endif
