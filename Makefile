# tally -- counting and notification core of a social site.
#   make            build every program (bin/)
#   make run        install what is missing, build, run the site on PORT (8080)
#   make test       install what is missing, build, run every test, print a summary
#   make bench      benchmarks (tests/bench/), ratios against same-run baselines
#                   (make bench-traffic: a site's traffic alone, its first part)
#   make install    PREFIX=/usr/local DESTDIR=... programs, www/, nginx snippet, systemd units
#   make lint       grep-bans (sprintf, strcpy, atoi, ...), the layers (scripts/lint-layers.pl),
#                   cppcheck and scan-build

CC       ?= cc
OPT      ?= -O2 -g
WARN      = -std=c11 -Wall -Wextra -Wstrict-prototypes -Wwrite-strings -Werror
CPPFLAGS += -D_GNU_SOURCE -Ishared -Ihandlers -I/usr/include/postgresql -MMD -MP
CFLAGS   += $(OPT) $(WARN)
LDLIBS    = -lhiredis -lsqlite3 -lpq -lsodium -ljansson -lcurl -lm -pthread

PORT     ?= 8080
RUN_DIR  ?= ./run
DEMO     ?= 1
PREFIX   ?= /usr/local
REPLICA  ?= 0
export PORT RUN_DIR DEMO REPLICA

# The library, layer by layer: each folder of shared/ includes only from
# itself and the folders before it in this list (make lint checks it).
LAYERS      = base store count social web
SHARED_base   = buf log clock cfg fault kv valid auth rnd metrics prefork supervise tmpl words ucd hashgate shmfile pace treeown
SHARED_store  = sql sql_pg schema schema_pg refold pg_translate pg pg_state pg_ahead pg_run pg_create dbmap wlock db dbreads ckpt dbq lease rcmd rhealth rowheld rconn rcl_slot rcl rcl_map rds rtrack rebuild key liveq pubsub app
SHARED_count  = counters cname ckeep cstore capply outbox taken fbatch flush recover recount recreport settle moved backlog reconcile runs lb
SHARED_social = account session sesscache post postlist drafts postview profileview people noteview topview opsview posting follow fanout timeline tlstale notify badges bcache \
                pcache seed seed_events seed_views followed find runnames throttle live device
SHARED_web    = serve peer batch req field resp flash route html layout keep act bjson form render view_social view_find view_post view_notes view_admin view_report view_metrics view_account chart
SHARED_SRCS   = $(foreach l,$(LAYERS),$(SHARED_$(l):%=$(l)/%))
HANDLERS    = web social notify admin
PROGS       = $(HANDLERS:%=bin/tally-%) bin/tally-worker bin/tally-live bin/tallyctl bin/tally-run

SHARED_OBJS = $(SHARED_SRCS:%=build/shared/%.o)
LIB         = build/libtally.a

UNIT_SRCS   = $(wildcard tests/unit/test-*.c)
UNIT_BINS   = $(UNIT_SRCS:tests/unit/%.c=build/unit/%)
ASAN_BINS   = $(UNIT_SRCS:tests/unit/%.c=build/asan/%)
ASAN_FLAGS  = -fsanitize=address,undefined -fno-sanitize-recover=all \
              -fno-omit-frame-pointer -g -O1

.PHONY: all run test test-scale bench-pg bench-traffic bench-live deps deps-test unit unit-asan integration browser bench bench-cluster scan-objs deps-lint \
        install lint lint-quick lint-deep clean fuzz soak mutants
all: $(PROGS)

build/shared/%.o: shared/%.c
	@mkdir -p $(@D)
	@echo "  CC      $<"
	@$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

build/handlers/%.o: handlers/%.c
	@mkdir -p $(@D)
	@echo "  CC      $<"
	@$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIB): $(SHARED_OBJS)
	@rm -f $@
	@ar rcs $@ $^

bin/tally-web: build/handlers/web.o build/handlers/web_pages.o $(LIB)
bin/tally-social: build/handlers/social.o build/handlers/social_pages.o \
    build/handlers/profile_pages.o build/handlers/post_pages.o \
    build/handlers/find_pages.o $(LIB)
bin/tally-notify: build/handlers/notify.o $(LIB)
bin/tally-admin: build/handlers/admin.o build/handlers/admin_pages.o \
    build/handlers/metrics_page.o $(LIB)
bin/tally-worker: build/handlers/worker.o $(LIB)
bin/tally-live: build/handlers/live.o $(LIB)
bin/tallyctl: build/handlers/tallyctl.o build/handlers/tallyctl_args.o $(LIB)
bin/tally-run: build/handlers/run.o build/handlers/run_os.o \
    build/handlers/run_cluster.o \
    build/handlers/run_redis.o build/handlers/run_pg.o \
    build/handlers/run_hosts.o build/handlers/run_user.o \
    build/handlers/run_demo.o $(LIB)
# Only the handlers serve HTTP: the other programs link without libfcgi, so
# a dependency of theirs on the web layer fails the build.  The handlers
# allocate with jemalloc: a request's many small allocations and libfcgi's
# 8 KB streams come from its thread cache, not glibc's bins and their
# consolidation (docs/BENCHMARKS.md: ~8 % of tally-social's CPU was
# glibc's malloc and free; the mix's stack -5 % a request).  The unit
# tests keep glibc's, which the sanitizers replace.
$(HANDLERS:%=bin/tally-%): FCGI = -lfcgi -ljemalloc
$(PROGS):
	@mkdir -p bin
	@echo "  LINK    $@"
	@$(CC) $(CFLAGS) -o $@ $(filter %.o,$^) $(LIB) $(FCGI) $(LDLIBS)

# Unit tests: plain, and under ASan+UBSan with their own objects.
build/unit/%: tests/unit/%.c $(LIB)
	@mkdir -p $(@D)
	@echo "  CC      $@"
	@$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LIB) -lfcgi $(LDLIBS) -lcmocka

# What tests/scale/ runs of C against a stack's PostgreSQL (its URL an
# argument): built by make test-scale.
build/scale/%: tests/scale/%.c $(LIB)
	@mkdir -p $(@D)
	@echo "  CC      $@"
	@$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LIB) $(LDLIBS) -lcmocka

build/asan/shared/%.o: shared/%.c
	@mkdir -p $(@D)
	@echo "  CC/SAN  $<"
	@$(CC) $(CPPFLAGS) $(WARN) $(ASAN_FLAGS) -c -o $@ $<

build/asan/libtally.a: $(SHARED_SRCS:%=build/asan/shared/%.o)
	@rm -f $@
	@ar rcs $@ $^

build/asan/%: tests/unit/%.c build/asan/libtally.a
	@mkdir -p $(@D)
	@echo "  CC/SAN  $@"
	@$(CC) $(CPPFLAGS) $(WARN) $(ASAN_FLAGS) -o $@ $< build/asan/libtally.a \
	    -lfcgi $(LDLIBS) -lcmocka

deps:
	@scripts/deps.sh run

deps-test:
	@scripts/deps.sh test

deps-lint:
	@scripts/deps.sh lint

# The builds on every core (make -j is safe here: each object, archive
# and program names what it is made of); lint after them, on its own.
JOBS     := $(shell nproc 2>/dev/null || echo 2)

run: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all
	@exec bin/tally-run

test: deps-test
	@$(MAKE) --no-print-directory -j$(JOBS) all $(UNIT_BINS) $(ASAN_BINS)
	@$(MAKE) --no-print-directory lint-quick
	@tests/run-all.sh

# Beyond one machine: Redis Cluster, PostgreSQL (DB=postgres) and handler
# hosts: their own tests and the suites again on them.  Not in make test
# (which stays under 15 minutes); .ci/run runs both.
test-scale: all build/scale/pglost
	@scripts/deps.sh scale
	@TESTS=cluster,pg tests/run-all.sh

# cmocka writes TAP only when asked (prove finds no plan otherwise)
unit: $(UNIT_BINS)
	@CMOCKA_MESSAGE_OUTPUT=TAP prove -e '' $(UNIT_BINS)

unit-asan: $(ASAN_BINS)
	@ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 \
	 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	 CMOCKA_MESSAGE_OUTPUT=TAP prove -e '' $(ASAN_BINS)

integration: all
	@cd tests/browser && node --test --test-reporter=spec ../integration/

browser: all
	@cd tests/browser && node --test --test-reporter=spec ../browser/

bench: all
	@scripts/deps.sh bench
	@tests/bench/traffic.sh
	@tests/bench/live.sh
	@LDLIBS='$(LDLIBS)' tests/bench/run.sh
	@tests/bench/cluster.sh
	@LDLIBS='$(LDLIBS)' tests/bench/postgres.sh
	@node tests/bench/runlag.mjs

# A site's traffic (every request another user's, writes mixed in) against
# the 1 KB hello, at 300 and 10,000 users (part of "make bench", first).
bench-traffic: all
	@scripts/deps.sh bench
	@tests/bench/traffic.sh

# A like with 1,000 live-badge streams open against one with none (part of
# "make bench").
bench-live: all
	@scripts/deps.sh bench
	@tests/bench/live.sh

# The badge poll and a like on a Redis Cluster against one Redis (part of
# "make bench").
bench-cluster: all
	@scripts/deps.sh bench
	@tests/bench/cluster.sh

# A like and a profile page on PostgreSQL against SQLite, and the flush
# into PostgreSQL against a raw batched UPSERT (part of "make bench").
bench-pg: all
	@scripts/deps.sh bench
	@LDLIBS='$(LDLIBS)' tests/bench/postgres.sh

# Mixed wrk traffic for SOAK_SECONDS (60): counts exact, memory flat.
soak: all
	@scripts/deps.sh bench
	@node tests/soak/soak.mjs

# libFuzzer (clang): every target for FUZZ_SECONDS (60); make test runs 5 s each.
fuzz:
	@scripts/deps.sh test
	@FUZZ_SECONDS=$${FUZZ_SECONDS:-60} tests/fuzz/run.sh

# Mutation check (not part of make test): each mutant of tests/mutants/mutants.txt,
# a plausible bug, is built in a temporary copy of the tree and its tests must
# fail.  MUTANTS=a,b: a subset; tests/mutants/run.sh --check: the patterns only.
mutants:
	@scripts/deps.sh test
	@tests/mutants/run.sh

# Grep-bans, then the structure (scripts/lint-layers.pl: layers, storage and
# FastCGI only in their layer, no include cycle, no file over 500 lines).
SRC_ALL = shared/*/*.c handlers/*.c
# make lint: every check.  make test runs lint-quick (all but clang's
# analyzer, ~55 s of a run that must stay under 15 minutes); .ci/run runs
# lint-deep after it, so CI runs every check.
lint: lint-quick lint-deep
	@echo "lint: ok"

lint-quick: deps-lint
	@! grep -nE '\b(sprintf|strcpy|strcat|atoi|gets)\(' $(SRC_ALL) \
	    || (echo "lint: banned call"; false)
	@! grep -nE 'FCGX_Put|FCGX_FPrintF' $(SRC_ALL) | grep -v '^shared/web/resp.c' \
	    || (echo "lint: FastCGI output outside resp.c"; false)
	@# (dbreads.c: the shared read transaction's BEGIN and COMMIT)
	@! grep -nE 'sqlite3_prepare' $(SRC_ALL) | grep -vE '^shared/store/(db|dbq|dbreads).c' \
	    || (echo "lint: sqlite3_prepare outside db.c, dbq.c and dbreads.c"; false)
	@perl scripts/lint-layers.pl .
	@# the docs a newcomer reads: sizes, the two commands, no outside cite
	@scripts/lint-docs.sh || (echo "lint: newcomer docs"; false)
	@# cppcheck on the project's C; every kept suppression is explained
	@# in scripts/cppcheck.md
	@cppcheck --quiet --enable=warning,portability,performance --std=c11 \
	    -D_GNU_SOURCE -Ishared -Ihandlers --error-exitcode=1 --inline-suppr \
	    --suppressions-list=scripts/cppcheck.supp shared handlers

# clang's static analyzer over every file; any report fails
lint-deep: deps-lint
	@scan-build --status-bugs -o build/scan-report $(MAKE) -s -B -j2 scan-objs

# Objects of every C file, for scan-build only (bin/ is left alone).
SCAN_SRCS = $(SHARED_SRCS:%=shared/%.c) $(wildcard handlers/*.c)
scan-objs: $(SCAN_SRCS:%.c=build/scan/%.o)
build/scan/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/tally/www \
	    $(DESTDIR)$(PREFIX)/share/tally/nginx-conf $(DESTDIR)/etc/nginx/snippets \
	    $(DESTDIR)/etc/systemd/system $(DESTDIR)/etc/sysusers.d \
	    $(DESTDIR)/etc/tally
	install -m 0755 $(PROGS) $(DESTDIR)$(PREFIX)/bin/
	cp -R www/. $(DESTDIR)$(PREFIX)/share/tally/www/
	install -m 0644 nginx-conf/*.in $(DESTDIR)$(PREFIX)/share/tally/nginx-conf/
	ups=$$(for h in web social social-writer notify admin; do \
	  printf 'upstream tally_%s { server unix:/run/tally/%s.sock; }\n' \
	    "$$(echo $$h | tr - _)" "$$h"; done); \
	for f in tally-http.conf tally-live.conf tally.conf tally-headers.conf tally-fastcgi.conf; do \
	  TALLY_SOCK_DIR=/run/tally TALLY_WWW=$(PREFIX)/share/tally/www \
	  TALLY_CONF_DIR=/etc/nginx/snippets TALLY_LOGIN_RATE=30r/m \
	  TALLY_UPSTREAMS="$$ups" \
	  envsubst '$${TALLY_SOCK_DIR} $${TALLY_WWW} $${TALLY_CONF_DIR} $${TALLY_LOGIN_RATE} $${TALLY_UPSTREAMS}' \
	    < nginx-conf/$$f.in > $(DESTDIR)/etc/nginx/snippets/$$f || exit 1; \
	  chmod 0644 $(DESTDIR)/etc/nginx/snippets/$$f; done
	for f in systemd/*.service systemd/*.target; do \
	  sed 's|@PREFIX@|$(PREFIX)|g' $$f > $(DESTDIR)/etc/systemd/system/$${f#systemd/} \
	    || exit 1; \
	  chmod 0644 $(DESTDIR)/etc/systemd/system/$${f#systemd/}; done
	install -m 0644 systemd/tally.sysusers $(DESTDIR)/etc/sysusers.d/tally.conf
	@# Configuration the operator may have edited is never overwritten.
	test -e $(DESTDIR)/etc/tally/redis.conf || \
	  install -m 0644 systemd/redis.conf $(DESTDIR)/etc/tally/redis.conf
	test -e $(DESTDIR)/etc/tally/tally.env || \
	  install -m 0640 systemd/tally.env $(DESTDIR)/etc/tally/tally.env

clean:
	rm -rf build bin

-include $(wildcard build/shared/*/*.d build/handlers/*.d build/asan/shared/*/*.d build/unit/*.d build/asan/*.d)
