// Applies the merchant rules table served by the GraphQL query `merchantRules` exactly as the server does
// (src/admin/merchant-rules.ts, validateMerchantAccount): same data, same order, same messages.

const absent = (v) => v === undefined || v === null || v === "";

/** Every broken rule for these form values: [{ field, message }]. */
export function checkMerchant(values, rules) {
  const type =
    values.accountType === "individual" || values.accountType === "merchant" ? values.accountType : undefined;
  const errors = [];
  for (const r of rules.fields) {
    const v = values[r.field];
    if (absent(v)) {
      const required =
        type !== undefined ? r.requiredFor.includes(type) : r.requiredFor.length === rules.accountTypes.length;
      if (required) errors.push({ field: r.field, message: "is required" });
    } else if (v.length > r.maxLength)
      errors.push({ field: r.field, message: `must be at most ${r.maxLength} characters` });
    else if (r.pattern !== null && !new RegExp(r.pattern).test(v))
      errors.push({ field: r.field, message: r.patternMessage ?? "has an invalid format" });
  }
  for (const g of rules.groups) {
    if (type === undefined || !g.appliesTo.includes(type)) continue;
    const total = g.fields.reduce((n, f) => (absent(values[f]) ? n : n + values[f].length + g.perFieldOverhead), 0);
    if (total > g.maxTotal) errors.push({ field: g.fields[0], message: g.message });
  }
  return errors;
}

/** The rule in words, for the field's help line: "Printed by … · required · at most 25 characters". */
export function describeRule(rule, accountType) {
  const parts = [rule.help];
  if (rule.requiredFor.includes(accountType)) parts.push("required");
  else if (rule.requiredFor.length > 0) parts.push(`required for ${rule.requiredFor.join(" and ")} accounts`);
  else parts.push("optional");
  parts.push(`at most ${rule.maxLength} characters`);
  if (rule.patternMessage) parts.push(rule.patternMessage);
  return parts.filter(Boolean).join(" · ");
}
