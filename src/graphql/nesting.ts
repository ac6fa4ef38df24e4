/**
 * The deepest nesting of `{`, `[` and `(` in a GraphQL document, outside strings and comments. graphql-js
 * parses, validates and executes recursively: a 60 KB document of nested inline fragments or list
 * literals overflows the stack somewhere in that pipeline (an INTERNAL error, or a 500). A linear scan
 * before parsing refuses such documents cheaply; the field depth limit (limits.ts) still applies after.
 */
export const MAX_DOCUMENT_NESTING = 100;

export function documentNesting(query: string): number {
  let depth = 0;
  let max = 0;
  const n = query.length;
  for (let i = 0; i < n; i++) {
    const c = query.charCodeAt(i);
    if (c === 35 /* # */) {
      while (i < n && query.charCodeAt(i) !== 10 && query.charCodeAt(i) !== 13) i++;
    } else if (c === 34 /* " */) {
      if (query.startsWith('"""', i)) {
        i += 3;
        while (i < n && !query.startsWith('"""', i)) i += query.startsWith('\\"""', i) ? 4 : 1;
        i += 2;
      } else {
        i++;
        while (i < n && query.charCodeAt(i) !== 34 && query.charCodeAt(i) !== 10)
          i += query.charCodeAt(i) === 92 ? 2 : 1;
      }
    } else if (c === 123 || c === 91 || c === 40) {
      if (++depth > max) max = depth;
    } else if (c === 125 || c === 93 || c === 41) depth--;
  }
  return max;
}

export function tooDeepMessage(nesting: number): string {
  return `The document is nested ${nesting} levels deep (braces, brackets, parentheses); the limit is ${MAX_DOCUMENT_NESTING}`;
}
