-- profile.sql -- keep one backend busy with simhash(body) under perf.
--
-- psql variables: tab (table in simhash_speed), seconds (how long),
-- perfdata (output file).  Starts "perf record" on this backend from
-- psql (\! runs a shell; the pid travels in the environment, since \! does
-- not interpolate psql variables), then runs count(simhash(body)) over the
-- table in a loop for :seconds seconds.  run.sh waits for perf to finish.

\set ON_ERROR_STOP on
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SELECT pg_backend_pid() AS backend_pid \gset
\setenv BENCH_PID :backend_pid
\setenv BENCH_PERFDATA :perfdata
\setenv BENCH_SECONDS :seconds
\! sh -c 'perf record -F 1999 -p "$BENCH_PID" -o "$BENCH_PERFDATA" -- sleep $((BENCH_SECONDS + 1)) >"$BENCH_PERFDATA.log" 2>&1 & echo $! >"$BENCH_PERFDATA.pid"'
SELECT pg_sleep(0.5);
SELECT set_config('bench.tab', :'tab', false), set_config('bench.seconds', :'seconds', false) \gset
DO $$
DECLARE
	t0 timestamptz := clock_timestamp();
BEGIN
	WHILE clock_timestamp() < t0 + make_interval(secs => current_setting('bench.seconds')::int) LOOP
		EXECUTE format('SELECT count(simhash(body)) FROM simhash_speed.%I',
					   current_setting('bench.tab'));
	END LOOP;
END
$$;
