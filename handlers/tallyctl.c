/* tallyctl.c -- the operator's command line.
 *
 *   tallyctl useradd [--admin] LOGIN NAME PASSWORD
 *
 * Finds the database and Redis through RUN_DIR (default ./run), like the
 * handlers.  Exit status 0 on success; otherwise 1 (or 2 for usage) with
 * a one-line reason on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "app.h"
#include "log.h"
#include "valid.h"

static int
usage(void)
{
	fprintf(stderr, "usage: tallyctl useradd [--admin] LOGIN NAME PASSWORD\n");
	return 2;
}

static int
cmd_useradd(struct app *a, int argc, char **argv)
{
	char *login = NULL;
	int admin = 0, i = 1;
	long long id;

	if (argc > 1 && strcmp(argv[1], "--admin") == 0) {
		admin = 1;
		i++;
	}
	if (argc - i != 3)
		return usage();
	if (valid_check(VALID_LOGIN, argv[i], strlen(argv[i]), &login) == -1) {
		fprintf(stderr, "tallyctl: bad login (3-32 of a-z 0-9 _)\n");
		return 1;
	}
	if (valid_check(VALID_NAME, argv[i + 1], strlen(argv[i + 1]), NULL)
	    == -1) {
		fprintf(stderr, "tallyctl: bad name (1-64 characters)\n");
		free(login);
		return 1;
	}
	if (valid_check(VALID_PASSWORD, argv[i + 2], strlen(argv[i + 2]), NULL)
	    == -1) {
		fprintf(stderr, "tallyctl: bad password (8-128 bytes)\n");
		free(login);
		return 1;
	}
	id = account_create(&a->db, login, argv[i + 1], argv[i + 2],
	    strlen(argv[i + 2]), admin, a->cfg.pwhash_min);
	if (id <= 0) {
		fprintf(stderr, "tallyctl: %s\n", id == 0 ?
		    "that login is taken" : "database error");
		free(login);
		return 1;
	}
	printf("created user %s (id %lld)%s\n", login, id,
	    admin ? " as admin" : "");
	free(login);
	return 0;
}

int
main(int argc, char *argv[])
{
	struct app a;
	int rc;

	if (argc < 2)
		return usage();
	if (app_open(&a, "tallyctl") == -1) {
		fprintf(stderr, "tallyctl: cannot open the database (RUN_DIR?)\n");
		return 1;
	}
	if (strcmp(argv[1], "useradd") == 0)
		rc = cmd_useradd(&a, argc - 1, argv + 1);
	else
		rc = usage();
	app_close(&a);
	return rc;
}
