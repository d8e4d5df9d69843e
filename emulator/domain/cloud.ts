import * as fs from "node:fs";
import * as path from "node:path";
import { notFound } from "./errors";
import type { CloudConnectionRecord, UserRecord } from "./records";

/**
 * An account's cloud connections (`GET /api/v0/users/cloud_integrations/`, what `cloud copy` names by id): on
 * the service they are made in its console, signing in to the cloud; here the control API makes one, and a folder
 * of this computer stands for its bucket (docs/service-facts.md#cloud-connections).
 */
export const cloudConnections = {
  of(user: UserRecord): CloudConnectionRecord[] {
    return user.cloudConnections ?? [];
  },

  /** A new connection of `user`, its bucket a new folder under `root`. */
  add(user: UserRecord, root: string, request: { name: string; cloudType: string }, nextId: number): CloudConnectionRecord {
    const folder = path.join(root, String(nextId));
    fs.mkdirSync(folder, { recursive: true });
    const connection = { id: nextId, name: request.name, cloudType: request.cloudType, folder };
    (user.cloudConnections ??= []).push(connection);
    return connection;
  },

  /** The connection `selected` names (its id, as text or number), or the service's refusal. */
  find(user: UserRecord, selected: string | number): CloudConnectionRecord {
    const found = this.of(user).find((c) => String(c.id) === String(selected).trim());
    if (!found) throw notFound("no_such_connection", `No cloud connection ${String(selected).slice(0, 40)} on this account: see show connections.`);
    return found;
  },

};
