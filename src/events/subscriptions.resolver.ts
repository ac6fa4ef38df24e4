import { Arg, Ctx, ID, Resolver, Root, Subscription } from "type-graphql";
import type { SubscribeResolverData } from "type-graphql";
import type { GqlContext } from "../graphql/context.js";
import type { StoredEvent } from "./event-bus.js";
import type { LiveEvents } from "./live-events.js";
import {
  AREA_ENUM,
  type AreaGql,
  TransactionEventGql,
  TxStatusGql,
  toEventGql,
} from "../transactions/transaction.types.js";

type Data = SubscribeResolverData<
  unknown,
  { transactionId?: string; area?: string; status?: string; lastEventId?: string },
  GqlContext
>;

/** This app's live events, from the resolver instance its events module registered. */
const live = (ctx: GqlContext): LiveEvents => ctx.container.get(SubscriptionsResolver).live;

/** Live updates over graphql-ws, authenticated in connection_init (API key pair, clientToken, or admin token). */
@Resolver()
export class SubscriptionsResolver {
  constructor(readonly live: LiveEvents) {}

  @Subscription(() => TransactionEventGql, {
    description:
      "Every change of one transaction, its current state first (its latest event); a terminal transaction sends " +
      "its final state, then completes. Pass lastEventId to replay what you missed instead.",
    subscribe: ({ args, context }: Data) =>
      live(context).open(context.principal, { transactionId: args.transactionId, lastEventId: args.lastEventId }),
  })
  transactionUpdated(
    @Root() event: StoredEvent,
    @Arg("transactionId", () => ID) _transactionId: string,
    @Arg("lastEventId", () => ID, { nullable: true }) _lastEventId: string | undefined,
    @Ctx() _ctx: GqlContext,
  ): TransactionEventGql {
    return toEventGql(event);
  }

  @Subscription(() => TransactionEventGql, {
    description:
      "Every change of all of the caller's transactions (all transactions for the admin token), optionally filtered",
    subscribe: ({ args, context }: Data) =>
      live(context).open(context.principal, { area: args.area, status: args.status, lastEventId: args.lastEventId }),
  })
  transactionUpdates(
    @Root() event: StoredEvent,
    @Arg("area", () => AREA_ENUM.values, { nullable: true }) _area: AreaGql | undefined,
    @Arg("status", () => TxStatusGql, { nullable: true }) _status: TxStatusGql | undefined,
    @Arg("lastEventId", () => ID, { nullable: true }) _lastEventId: string | undefined,
  ): TransactionEventGql {
    return toEventGql(event);
  }
}
