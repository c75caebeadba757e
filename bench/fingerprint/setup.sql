-- setup.sql -- tables for bench/fingerprint (schema simhash_speed).
--
-- en, zh          the corpus with default storage: bodies over ~2 kB are
--                 TOASTed and pglz-compressed, as in most real tables
-- en_plain, zh_plain
--                 the same rows with STORAGE EXTERNAL: TOASTed but not
--                 compressed, so detoasting is a plain copy
-- run.sh fills en and zh with COPY FROM STDIN, then runs fill.sql.

\set ON_ERROR_STOP on
SET client_min_messages = warning;

CREATE EXTENSION IF NOT EXISTS simhash;
DROP SCHEMA IF EXISTS simhash_speed CASCADE;
CREATE SCHEMA simhash_speed;

CREATE TABLE simhash_speed.en (path text, body text);
CREATE TABLE simhash_speed.zh (path text, body text);
CREATE TABLE simhash_speed.en_plain (path text, body text);
CREATE TABLE simhash_speed.zh_plain (path text, body text);
ALTER TABLE simhash_speed.en_plain ALTER COLUMN body SET STORAGE EXTERNAL;
ALTER TABLE simhash_speed.zh_plain ALTER COLUMN body SET STORAGE EXTERNAL;
