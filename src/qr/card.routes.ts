import type { Request, Response, NextFunction, RequestHandler } from "express";
import type { Principal } from "../auth/principal.js";
import type { TxRecord } from "../transactions/record.js";
import { cardFacts, renderCardPng, renderCardSvg } from "./card.js";

export interface CardSource {
  /** The principal of a request: key headers, or `?token=<clientToken>` (so an `<img>` can show it). */
  principal(req: Request): Promise<Principal>;
  /** The transaction the principal may see, or null (another key's reads as missing). */
  transaction(p: Principal, id: string): Promise<TxRecord | null>;
}

const FILE = /^([A-Za-z0-9_-]{1,64})\.(png|svg)$/;

function fail(res: Response, status: number, code: string, message: string): void {
  res.status(status).json({ error: { code, message, details: [] } });
}

/** The card of one transaction: `GET /cards/{transactionId}.png|.svg`. */
export function cardRoute(source: CardSource): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const m = FILE.exec(String(req.params.file));
      if (m === null) return fail(res, 404, "NOT_FOUND", "No such card: use /cards/{transactionId}.png or .svg");
      const principal = await source.principal(req);
      if (principal.type === "anonymous")
        return fail(
          res,
          401,
          "UNAUTHENTICATED",
          "An API key (x-api-key, x-auth-type) or ?token=<clientToken> is required",
        );
      const tx = await source.transaction(principal, m[1]);
      if (tx === null || tx.qr === null || tx.qr === "") return fail(res, 404, "NOT_FOUND", "Transaction not found");
      const svg = renderCardSvg(cardFacts(tx.qr, { amount: tx.amount, currency: tx.currency }));
      // The QR string of a transaction never changes: the card may be kept (privately) for a while.
      res.setHeader("cache-control", "private, max-age=3600");
      res.setHeader("x-content-type-options", "nosniff");
      if (m[2] === "svg") res.type("image/svg+xml").send(svg);
      else res.type("image/png").send(renderCardPng(svg));
    } catch (err) {
      next(err);
    }
  };
}
