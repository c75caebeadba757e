/* src/simhash--0.1.0--0.2.0.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION simhash UPDATE TO '0.2.0'" to load this file. \quit

-- CREATE EXTENSION simhash runs simhash--0.1.0.sql and then this script, as
-- contrib modules do, so a fresh installation and an updated one are the
-- same by construction.  Objects new in 0.2.0, and changes to 0.1.0's, go
-- here, grouped by subject.
