"""The randomized SQL fuzzer of sql_tests/checks/fuzz_check.py, in parts:

runner.py   connections, statement log, failure detection, crash recovery
spell.py    the spellings of radius, centre and ball, and their Python truth
data.py     database, roles, tables, the Python model of their rows, DML rounds
queries.py  radius, nearest-neighbour and join cases (index == sequential scan)
scalar.py   functions, casts, literals, texts, encodings, inspection, COPY, DDL
"""
