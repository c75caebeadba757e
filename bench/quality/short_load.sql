-- short_load.sql -- create the short-text tables in schema simhash_bench.
--
-- Run by short.sh, which then fills them with COPY FROM STDIN:
--   short_texts  one row per text (originals, edited copies, old versions)
--   short_pairs  labelled pairs: kind pos/neg, category (short_prepare.py)
-- Only the short_* objects are dropped and recreated: run.sh's tables in
-- the same schema are left alone.

\set ON_ERROR_STOP on
SET client_min_messages = warning;

CREATE EXTENSION IF NOT EXISTS simhash;
CREATE SCHEMA IF NOT EXISTS simhash_bench;
DROP TABLE IF EXISTS simhash_bench.short_texts, simhash_bench.short_pairs,
	simhash_bench.short_fp;
DROP FUNCTION IF EXISTS simhash_bench.short_lbucket(int),
	simhash_bench.short_wbucket(int8);

CREATE TABLE simhash_bench.short_texts (
	id		int PRIMARY KEY,
	lang	text NOT NULL,		-- en or zh
	source	text NOT NULL,		-- kernel, fortune or gcc
	grp		text NOT NULL,		-- kernel path, fortune file or gcc domain
	unit	text NOT NULL,		-- file, para, sent, fortune, message (+edit)
	body	text NOT NULL
);

CREATE TABLE simhash_bench.short_pairs (
	a		int NOT NULL,
	b		int NOT NULL,
	kind	text NOT NULL,		-- pos or neg
	cat		text NOT NULL		-- real, word_sub, ..., random, same_source
);
