import type { Marketplace } from "./marketplace";
import { sshKeys } from "./ssh-keys";

/** What a user holds in the market: the things that cost money or grant access, by id. */
export interface Holdings {
  instances: number[];
  volumes: number[];
  templates: number[];
  apiKeys: number[];
  /** The SSH keys registered on the account (they let whoever holds the private half into its new instances). */
  sshKeys: number[];
}

export function holdingsOf(market: Marketplace, userId: number): Holdings {
  const user = market.accounts.user(userId);
  return {
    instances: market.instances.all().filter((i) => i.ownerId === userId).map((i) => i.id),
    volumes: market.volumes.list(userId).map((v) => v.id),
    templates: market.templates.search(userId, { creator_id: { eq: userId } }).map((t) => t.id),
    apiKeys: market.accounts.keysOf(userId).map((k) => k.id),
    sshKeys: user ? sshKeys.of(user).map((k) => k.id) : [],
  };
}

/** What `now` holds that `before` did not: what a run left behind. */
export function heldSince(before: Holdings, now: Holdings): Holdings {
  const added = (kind: keyof Holdings) => now[kind].filter((id) => !before[kind].includes(id));
  return { instances: added("instances"), volumes: added("volumes"), templates: added("templates"), apiKeys: added("apiKeys"), sshKeys: added("sshKeys") };
}
