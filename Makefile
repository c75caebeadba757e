# simhash/Makefile -- build with PGXS: make && make install && make installcheck

MODULE_big = simhash
OBJS = \
	src/ball.o \
	src/distance.o \
	src/fingerprint.o \
	src/knnpath.o \
	src/planner.o \
	src/selectivity.o \
	src/shbuild.o \
	src/shcheck.o \
	src/shcost.o \
	src/shhandler.o \
	src/shinsert.o \
	src/shjoin.o \
	src/shjoinexec.o \
	src/shpage.o \
	src/shknn.o \
	src/shprobe.o \
	src/shread.o \
	src/shscan.o \
	src/shsort.o \
	src/shtree.o \
	src/shutils.o \
	src/shvacuum.o \
	src/shvalidate.o \
	src/simhash.o \
	src/tokenize.o \
	src/type.o

EXTENSION = simhash
DATA = src/simhash--0.1.0.sql src/simhash--0.1.0--0.2.0.sql
PGFILEDESC = "simhash - near-duplicate text detection"

REGRESS = type distance fingerprint index planner join knn_tiebreak
REGRESS_OPTS = --inputdir=. --load-extension=simhash

# isolation specs: sql_tests/isolation/specs/*.spec, expected/*.out
# (simhash_own_inserts needs max_prepared_transactions > 0)
ISOLATION = simhash_insert_scan simhash_own_inserts simhash_vacuum simhash_cic simhash_estimate \
	simhash_subxact
ISOLATION_OPTS = --inputdir=sql_tests/isolation --load-extension=simhash

# -Werror with the warnings PostgreSQL's own headers trigger turned off
PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter \
	-Wno-sign-compare -Wno-missing-field-initializers

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# every object depends on every header (PGXS does not track them)
$(OBJS): $(wildcard src/*.h)
