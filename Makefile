# simhash/Makefile -- build with PGXS: make && make install && make installcheck

MODULE_big = simhash
OBJS = \
	src/access/keycache.o \
	src/access/shbuild.o \
	src/access/shcheck.o \
	src/access/shcost.o \
	src/access/shhandler.o \
	src/access/shinsert.o \
	src/access/shknn.o \
	src/access/shpage.o \
	src/access/shprobe.o \
	src/access/shrange.o \
	src/access/shread.o \
	src/access/shscan.o \
	src/access/shsort.o \
	src/access/shtree.o \
	src/access/shutils.o \
	src/access/shvacuum.o \
	src/access/shvalidate.o \
	src/clusters/clusterjoin.o \
	src/clusters/clusters.o \
	src/core/ball.o \
	src/core/bandtable.o \
	src/core/catalog.o \
	src/core/distance.o \
	src/core/type.o \
	src/executor/bandjoin.o \
	src/executor/bandjoin_exec.o \
	src/executor/bandjoin_probe.o \
	src/executor/bandjoin_table.o \
	src/executor/nearestsort.o \
	src/fingerprint/featureset.o \
	src/fingerprint/fingerprint.o \
	src/fingerprint/hancount.o \
	src/fingerprint/jaccard.o \
	src/fingerprint/radius.o \
	src/fingerprint/textsource.o \
	src/fingerprint/tokenize.o \
	src/module.o \
	src/neardup/neardup_lock.o \
	src/neardup/neardup_rls.o \
	src/neardup/neardup_search.o \
	src/neardup/neardup_setup.o \
	src/neardup/neardup_stmt.o \
	src/neardup/trigger_fingerprint.o \
	src/neardup/trigger_neardup.o \
	src/neardup/trigger_util.o \
	src/planner/clause.o \
	src/planner/knnpath.o \
	src/planner/planner.o \
	src/planner/selectivity.o

EXTENSION = simhash
DATA = src/simhash--0.1.0.sql src/simhash--0.1.0--0.2.0.sql
PGFILEDESC = "simhash - near-duplicate text detection"

REGRESS = type distance fingerprint index planner join knn_tiebreak include radius jaccard security \
	trigger neardup_rls \
	suggested_radius clusters upgrade
REGRESS_OPTS = --load-extension=simhash

# isolation specs: sql_tests/isolation/specs/*.spec, expected/*.out
ISOLATION = simhash_insert_scan simhash_own_inserts simhash_own_inserts_prepared simhash_vacuum \
	simhash_cic simhash_estimate \
	simhash_subxact simhash_neardup_reject simhash_neardup_skip simhash_neardup_link \
	simhash_neardup_bulk simhash_neardup_verify simhash_neardup_verify_modes
ISOLATION_OPTS = --inputdir=$(srcdir)/sql_tests/isolation --load-extension=simhash

# TAP suites (sql_tests/t/*.pl) through PGXS's own prove wiring:
# make installcheck-tap [PROVE_TESTS=sql_tests/t/001_crash.pl].  They start
# clusters of their own and take minutes, so they are not part of
# installcheck (nor of the Debian package's autopkgtest); sql_tests/run.sh
# runs them one by one.
PROVE_TESTS ?= sql_tests/t/*.pl
PROVE_FLAGS = -I sql_tests/t

# each layer's folder is on the include path: #include "simhash_am.h"
PG_CPPFLAGS = $(patsubst %,-I$(srcdir)/src/%,core fingerprint access planner executor neardup clusters)

# -Werror with the warnings PostgreSQL's own headers trigger turned off
PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter \
	-Wno-sign-compare -Wno-missing-field-initializers

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# simhash_own_inserts_prepared needs max_prepared_transactions > 0, which a
# default server lacks: "make installcheck" asks the server (psql with the
# PG* environment) and leaves the spec out, saying so.  Only for the
# installcheck goal: the full suite's cluster has prepared transactions,
# and sql_tests/in-cluster.sh reads the whole list.
ifneq ($(filter installcheck,$(MAKECMDGOALS)),)
ifneq ($(origin ISOLATION),command line)
ifeq ($(shell $(bindir)/psql -XAtqc 'SHOW max_prepared_transactions' postgres 2>/dev/null),0)
$(warning skipping isolation test simhash_own_inserts_prepared: it needs max_prepared_transactions > 0 on the server)
ISOLATION := $(filter-out simhash_own_inserts_prepared,$(ISOLATION))
endif
endif
endif

.PHONY: installcheck-tap
installcheck-tap:
	$(prove_installcheck)

# every object depends on every header (PGXS does not track them)
$(OBJS): $(wildcard $(srcdir)/src/*/*.h)

# A VPATH build (make -f SRCDIR/Makefile VPATH=SRCDIR from another
# directory, as Debian's pg_buildext does in build-15/) writes the objects
# into src/ of the build directory, which must exist first.
ifneq ($(srcdir),.)
$(shell mkdir -p $(sort $(dir $(OBJS))))
endif

# The PGXN release: make dist writes simhash-VERSION.zip (VERSION from
# META.json) holding one directory simhash-VERSION/ with what a user needs
# to build, install and run make installcheck; nothing generated, no
# development tools, no packaging.
DIST_FILES = META.json Makefile simhash.control README.md src/README LICENSE $(DATA) \
	$(patsubst $(srcdir)/%,%,$(wildcard $(srcdir)/src/*.c $(srcdir)/src/*/*.c $(srcdir)/src/*/*.h $(srcdir)/src/*/README \
		$(srcdir)/sql/*.sql $(srcdir)/expected/*.out \
		$(srcdir)/sql_tests/isolation/specs/*.spec $(srcdir)/sql_tests/isolation/expected/*.out))

.PHONY: dist
dist:
	@set -e; \
	name=$(EXTENSION)-$$(python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])' \
		<$(srcdir)/META.json); \
	rm -rf $$name $$name.zip; \
	mkdir $$name; \
	(cd $(srcdir) && cp --parents $(DIST_FILES) $(CURDIR)/$$name/); \
	zip -qrX $$name.zip $$name; \
	rm -rf $$name; \
	echo $$name.zip
