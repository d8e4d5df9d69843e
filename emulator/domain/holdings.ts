import type { Marketplace } from "./marketplace";
import { envVars } from "./env-vars";
import { sshKeys } from "./ssh-keys";

/** What a user holds in the market: the things that cost money or grant access, by id. */
export interface Holdings {
  instances: number[];
  volumes: number[];
  templates: number[];
  apiKeys: number[];
  /** The SSH keys registered on the account (they let whoever holds the private half into its new instances). */
  sshKeys: number[];
  /** The account's environment variables, by key (every new instance gets them: secrets, often). */
  envVars: string[];
  /** Its notification webhooks (each one posts the account's events to a URL). */
  webhooks: number[];
  /** Its serverless endpoints (each keeps cold workers rented) and worker groups. */
  endpoints: number[];
  workerGroups: number[];
  /** Its deployments (each with an endpoint and a group of its own). */
  deployments: number[];
}

export function holdingsOf(market: Marketplace, userId: number): Holdings {
  const user = market.accounts.user(userId);
  return {
    instances: market.instances.all().filter((i) => i.ownerId === userId).map((i) => i.id),
    volumes: market.volumes.list(userId).map((v) => v.id),
    templates: market.templates.search(userId, { creator_id: { eq: userId } }).map((t) => t.id),
    apiKeys: market.accounts.keysOf(userId).map((k) => k.id),
    sshKeys: user ? sshKeys.of(user).map((k) => k.id) : [],
    envVars: user ? Object.keys(envVars.of(user)) : [],
    webhooks: user ? market.webhooks.list(user).map((w) => w.id) : [],
    endpoints: market.serverless.endpointsOf(userId).map((e) => e.id),
    workerGroups: market.serverless.groupsOfOwner(userId).map((g) => g.id),
    deployments: market.deployments.of(userId).map((d) => d.id),
  };
}

/** What `now` holds that `before` did not: what a run left behind. */
export function heldSince(before: Holdings, now: Holdings): Holdings {
  const added = <T>(was: T[], is: T[]) => is.filter((id) => !was.includes(id));
  const kinds = Object.keys(now) as (keyof Holdings)[];
  return Object.fromEntries(kinds.map((kind) => [kind, added<string | number>(before[kind], now[kind])])) as unknown as Holdings;
}
