/**
 * The kinds of API key this service knows: one per upstream area, each declared by its area (module.ts
 * `AreaDefinition.key`) and collected by app.ts from the module list. Nothing below app.ts lists the areas:
 * the authenticator, the admin API, the REST shim and the OpenAPI document read them from here.
 */
export interface KeyKindSpec {
  /** The key's kind, which is also its area's name on transactions ("gateway_link"). */
  kind: string;
  /** The `x-auth-type` header value a key of this kind is sent with ("api-gateway-link"). */
  authType: string;
  /** The tag in the key's text: `pqr_<tag>_…` (a few letters; tells a key's kind at a glance). */
  tag: string;
  /** The area's REST paths as an error names them ("/gateway-link/*"). */
  paths: string;
  /** The OpenAPI security scheme of these keys (its name, and what /docs says of it). */
  scheme: { name: string; description: string };
  /**
   * What a key of this kind is bound to, if anything: the admin input field that names it (`ApiKeyInput`), and
   * the message when it is missing. The area checks the id belongs to the merchant (AdminService.acceptKeyTarget).
   */
  target?: { field: string; required: string };
}

export class KeyKinds {
  private readonly byKind: Map<string, KeyKindSpec>;
  private readonly byAuthType: Map<string, KeyKindSpec>;

  constructor(readonly list: readonly KeyKindSpec[]) {
    this.byKind = new Map(list.map((k) => [k.kind, k]));
    this.byAuthType = new Map(list.map((k) => [k.authType, k]));
    if (this.byKind.size !== list.length) throw new Error("two areas declare the same key kind");
    if (this.byAuthType.size !== list.length) throw new Error("two areas declare the same x-auth-type");
    if (new Set(list.map((k) => k.tag)).size !== list.length) throw new Error("two areas declare the same key tag");
  }

  /** The kind an `x-auth-type` value names; undefined for an unknown value. */
  kindOfAuthType(authType: string | undefined): string | undefined {
    return authType === undefined ? undefined : this.byAuthType.get(authType)?.kind;
  }

  get(kind: string): KeyKindSpec | undefined {
    return this.byKind.get(kind);
  }

  /** The spec of a kind the service has (a route's, a stored key's); throws for one it does not. */
  of(kind: string): KeyKindSpec {
    const spec = this.byKind.get(kind);
    if (spec === undefined) throw new Error(`unknown key kind "${kind}"`);
    return spec;
  }

  kinds(): string[] {
    return this.list.map((k) => k.kind);
  }
}
