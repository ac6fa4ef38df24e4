// The overview page's one query (its own module: test/graphql/cost.test.ts prices it against the cost budget).
const COUNTS = "payments paid failed expired pending late finished successRate";
const GROUP = `id name counts { payments paid successRate } paid { currency count amount }`;
export const OVERVIEW_QUERY = `query($from: DateTimeISO!, $to: DateTimeISO!, $merchantId: ID, $area: Area) {
  overview(from: $from, to: $to, merchantId: $merchantId, area: $area) {
    bucket timeZone totals { ${COUNTS} }
    currencies { currency paidAmount counts { ${COUNTS} } series { start paidAmount counts { payments paid failed expired pending } } }
    merchants { ${GROUP} } areas { ${GROUP} }
    webhooks { delivered retrying failed failingEndpoints disabledEndpoints p95LatencyMs } } }`;
