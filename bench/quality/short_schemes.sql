-- short_schemes.sql -- export English short-text pairs for short_schemes.py.
--
-- After short.sh: writes to the file named by psql variable pairfile (TSV,
-- COPY text format) category, length bucket, first text, second text for
-- the English pairs whose first text has at most 200 characters: every
-- positive, and a fixed third of the negatives (hashint4(a) % 3 = 0).

\set ON_ERROR_STOP on
SET search_path = simhash_bench, public;
\o :pairfile
COPY (SELECT p.cat, short_lbucket(length(t.body)), t.body, u.body
	  FROM short_pairs AS p
	  JOIN short_texts AS t ON t.id = p.a
	  JOIN short_texts AS u ON u.id = p.b
	  WHERE t.lang = 'en' AND length(t.body) <= 200
			AND (p.kind = 'pos' OR hashint4(p.a) % 3 = 0)
	  ORDER BY p.a, p.b, p.cat) TO STDOUT;
\o
