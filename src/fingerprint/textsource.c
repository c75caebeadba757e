/*-------------------------------------------------------------------------
 *
 * textsource.c
 *	  Feed a text datum to the tokenizer as UTF-8, piece by piece.
 *
 * simhash(text) must not need memory proportional to its input beyond what
 * PostgreSQL itself needs to hand the value over.  So a large value stored
 * out of line without compression is read from TOAST slice by slice
 * instead of being detoasted whole, and a text in a server encoding other
 * than UTF-8 is converted one piece at a time.  (A compressed value has to
 * be decompressed whole: PostgreSQL cannot decompress a part from the
 * middle.)
 *
 * Copyright (c) 2026, the simhash authors
 *
 * IDENTIFICATION
 *	  src/fingerprint/textsource.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"

#include "featureset.h"
#include "fingerprint.h"

/* bytes of server-encoded text converted at a time */
#define SIMHASH_CONVERT_CHUNK	(1024 * 1024)

/* bytes read from TOAST at a time; smaller values are detoasted whole */
#define SIMHASH_TOAST_SLICE		(1024 * 1024)

/*
 * Feed s[0..len), whole characters of the server encoding, converting it to
 * UTF-8 a piece at a time.
 */
static void
SimhashPushServer(SimhashTokenizer *tk, const char *s, size_t len, bool final)
{
	int			encoding = GetDatabaseEncoding();
	size_t		pos = 0;

	if (encoding == PG_UTF8 || encoding == PG_SQL_ASCII)
	{
		/* SQL_ASCII is read as UTF-8: the tokenizer repairs invalid bytes */
		SimhashTokenizerPush(tk, s, len, final);
		return;
	}

	do
	{
		int			clip;
		char	   *utf8;

		CHECK_FOR_INTERRUPTS();
		clip = pg_encoding_mbcliplen(encoding, s + pos, (int) Min(len - pos, PG_INT32_MAX),
									 SIMHASH_CONVERT_CHUNK);
		if (clip <= 0 && pos < len)	/* cannot happen for verified input */
			elog(ERROR, "could not split text for encoding conversion");
		utf8 = (char *) pg_do_encoding_conversion((unsigned char *) s + pos, clip,
												  encoding, PG_UTF8);
		pos += clip;
		SimhashTokenizerPush(tk, utf8, (utf8 == s + pos - clip) ? (size_t) clip : strlen(utf8),
							 final && pos == len);
		if (utf8 != s + pos - clip)
			pfree(utf8);
	} while (pos < len);
}

/*
 * Feed a value stored out of line and uncompressed, of "size" bytes, slice
 * by slice.  A slice may end inside a character: the bytes of that last
 * character wait for the next slice (the tokenizer itself copes with cut
 * UTF-8, but conversions from other encodings need whole characters).
 */
static void
SimhashPushToastSlices(SimhashTokenizer *tk, struct varlena *attr, int32 size)
{
	int			encoding = GetDatabaseEncoding();
	bool		whole_chars = (encoding != PG_UTF8 && encoding != PG_SQL_ASCII);
	char		pending[MAX_MULTIBYTE_CHAR_LEN];
	int			npending = 0;

	for (int32 off = 0; off < size; off += SIMHASH_TOAST_SLICE)
	{
		int32		n = Min(size - off, SIMHASH_TOAST_SLICE);
		bool		final = (off + n == size);
		struct varlena *slice = detoast_attr_slice(attr, off, n);
		char	   *data = VARDATA_ANY(slice);
		int			dlen = VARSIZE_ANY_EXHDR(slice);

		if (dlen != n)
			elog(ERROR, "TOAST slice of %d bytes has %d", n, dlen);
		if (!whole_chars)
			SimhashPushServer(tk, data, dlen, final);
		else
		{
			char	   *buf = data;
			int			blen = dlen;
			int			cut;

			if (npending > 0)
			{
				buf = palloc(npending + dlen);
				memcpy(buf, pending, npending);
				memcpy(buf + npending, data, dlen);
				blen += npending;
			}
			cut = final ? blen : pg_encoding_mbcliplen(encoding, buf, blen, blen);
			if (blen - cut > (int) sizeof(pending))
				elog(ERROR, "could not split text for encoding conversion");
			SimhashPushServer(tk, buf, cut, final);
			npending = blen - cut;
			memcpy(pending, buf + cut, npending);
			if (buf != data)
				pfree(buf);
		}
		pfree(slice);
	}
}

/*
 * Extract the features of a text datum.  With keep_text, the feature set
 * also remembers each feature's text and the order of first appearance.
 */
SimhashFeatureSet *
SimhashExtractFeatures(Datum textdatum, bool keep_text)
{
	struct varlena *attr = (struct varlena *) DatumGetPointer(textdatum);
	SimhashTokenizer *tk;
	text	   *t;

	if (VARATT_IS_EXTERNAL_ONDISK(attr))
	{
		struct varatt_external toast_pointer;

		VARATT_EXTERNAL_GET_POINTER(toast_pointer, attr);
		if (!VARATT_EXTERNAL_IS_COMPRESSED(toast_pointer) &&
			VARATT_EXTERNAL_GET_EXTSIZE(toast_pointer) > 2 * SIMHASH_TOAST_SLICE)
		{
			tk = SimhashTokenizerCreate(keep_text,
										VARATT_EXTERNAL_GET_EXTSIZE(toast_pointer));
			SimhashPushToastSlices(tk, attr,
								   VARATT_EXTERNAL_GET_EXTSIZE(toast_pointer));
			return SimhashTokenizerFinish(tk);
		}
	}

	t = pg_detoast_datum_packed(attr);
	tk = SimhashTokenizerCreate(keep_text, VARSIZE_ANY_EXHDR(t));
	SimhashPushServer(tk, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), true);
	if (t != (text *) attr)
		pfree(t);
	return SimhashTokenizerFinish(tk);
}
