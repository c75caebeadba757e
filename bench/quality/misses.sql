-- misses.sql -- show what a scheme gets wrong at k = 3 (default: a_default).
--
-- Lists the positive pairs farther apart than 3 bits (with the distance
-- under no cap for comparison, the shingle Jaccard and the sizes) and the
-- negative pairs within 3 bits.  psql variable scheme picks the scheme.

\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET search_path = simhash_bench, public;
\if :{?scheme}
\else
\set scheme a_default
\endif

\echo
\echo Positive pairs missed at k = 3 by :scheme
SELECT p.kind, da.path, fa.fp <-> fb.fp AS d,
	   na.fp <-> nb.fp AS d_nocap,
	   round(p.jaccard::numeric, 3) AS jaccard,
	   octet_length(da.body) AS bytes_old, octet_length(db.body) AS bytes_new
FROM pairs AS p
JOIN docs AS da ON da.id = p.a
JOIN docs AS db ON db.id = p.b
JOIN fp AS fa ON fa.id = p.a AND fa.scheme = :'scheme'
JOIN fp AS fb ON fb.id = p.b AND fb.scheme = :'scheme'
JOIN fp AS na ON na.id = p.a AND na.scheme = 'b_cap_none'
JOIN fp AS nb ON nb.id = p.b AND nb.scheme = 'b_cap_none'
WHERE p.kind LIKE 'pos%' AND (fa.fp <-> fb.fp) > 3
ORDER BY p.kind, d DESC, da.path;

\echo
\echo Negative pairs within k = 3 under :scheme
SELECT p.kind, da.ver || ':' || da.path AS doc_a, db.ver || ':' || db.path AS doc_b,
	   fa.fp <-> fb.fp AS d, round(p.jaccard::numeric, 3) AS jaccard
FROM pairs AS p
JOIN docs AS da ON da.id = p.a
JOIN docs AS db ON db.id = p.b
JOIN fp AS fa ON fa.id = p.a AND fa.scheme = :'scheme'
JOIN fp AS fb ON fb.id = p.b AND fb.scheme = :'scheme'
WHERE p.kind LIKE 'neg%' AND (fa.fp <-> fb.fp) <= 3
ORDER BY p.kind, d, doc_a;
