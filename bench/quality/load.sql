-- load.sql -- create the bench/quality tables in schema simhash_bench.
--
-- Run by run.sh, which then fills docs and pairs with COPY FROM STDIN:
--   docs   one row per document (both kernel versions)
--   pairs  labelled pairs: pos_en, pos_zh, neg_all, neg_en, neg_zh
--   fp     fingerprints, one row per (scheme, document), filled by schemes.sql
-- Everything is dropped and recreated, so the script can be run again.

\set ON_ERROR_STOP on
SET client_min_messages = warning;

CREATE EXTENSION IF NOT EXISTS simhash;
DROP SCHEMA IF EXISTS simhash_bench CASCADE;
CREATE SCHEMA simhash_bench;

CREATE TABLE simhash_bench.docs (
	id		int PRIMARY KEY,
	ver		text NOT NULL,		-- kernel version, e.g. 6.1
	path	text NOT NULL,		-- Documentation/...
	lang	text NOT NULL,		-- en, zh or other
	body	text NOT NULL
);

CREATE TABLE simhash_bench.pairs (
	a		int NOT NULL,
	b		int NOT NULL,
	kind	text NOT NULL,		-- pos_en, pos_zh, neg_all, neg_en, neg_zh
	jaccard	float8 NOT NULL		-- shingle Jaccard computed by prepare.py
);

CREATE TABLE simhash_bench.fp (
	scheme	text NOT NULL,
	id		int NOT NULL,
	fp		simhash64 NOT NULL,
	PRIMARY KEY (scheme, id)
);
