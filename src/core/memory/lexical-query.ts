/** Words too common to say what a memory is about; a query of only these finds nothing lexically. */
const STOPWORDS = new Set(
  'a an and are as at be but by can did do does for from had has have how i in is it its me my no not of on or our so than that the their them then there these they this to was we were what when where which who why will with you your'.split(' '),
);
const MAX_TERMS = 32;

/**
 * An FTS5 MATCH expression for free text: its distinct content words, each quoted (so nothing in the
 * text is read as FTS5 syntax), any of them matching; null when the text has no content words.
 */
export function lexicalQuery(text: string): string | null {
  const words = (text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).filter((word) => word.length > 1 && !STOPWORDS.has(word));
  const terms = [...new Set(words)].slice(0, MAX_TERMS);
  return terms.length === 0 ? null : terms.map((term) => `"${term}"`).join(' OR ');
}
