import type { UserRecord } from "../records";
import { Clock } from "../clock";
import { ServiceError, forbidden } from "../errors";
import { Channel } from "./channels";
import { AUTHORIZATION_WINDOW_MS } from "./constants";
import { TfaFaults, takeFault } from "./faults";

/*
 * The add-method authorization: a second factor proved through authorize-new-method (POST sends or expects a
 * code, PUT checks it) opens a window in which confirm-new may add methods.
 */

export interface AuthorizationRecord {
  userId: number;
  /** The challenge of the authorize-new-method POST, waiting for its PUT. */
  pending?: PendingAuthorization;
  /** Epoch ms until which a new method may be added. */
  grantedUntil: number | null;
}

export interface PendingAuthorization {
  secret: string;
  channel: Channel;
  methodId?: number;
}

export class Authorizations {
  private byUser = new Map<number, AuthorizationRecord>();

  constructor(private readonly clock: Clock, private readonly faults: TfaFaults) {}

  pending(user: UserRecord): PendingAuthorization | undefined {
    return this.byUser.get(user.id)?.pending;
  }

  /** A new POST replaces any earlier pending step. */
  setPending(user: UserRecord, pending: PendingAuthorization): void {
    this.record(user).pending = pending;
  }

  /** Opens the window; the pending step, if any, is done. */
  grant(user: UserRecord): void {
    Object.assign(this.record(user), { pending: undefined, grantedUntil: this.clock.now() + AUTHORIZATION_WINDOW_MS });
  }

  authorized(user: UserRecord): boolean {
    const until = this.byUser.get(user.id)?.grantedUntil;
    return until != null && until > this.clock.now();
  }

  require(user: UserRecord): void {
    if (takeFault(this.faults, "serviceUnavailable")) {
      throw new ServiceError("unavailable", "service_unavailable", "The authorization store is unavailable; retry.");
    }
    if (!this.authorized(user)) {
      throw forbidden("authorization_required", "Adding a method needs authorization: POST then PUT authorize-new-method (valid 30 minutes).");
    }
  }

  /** Drops the window and any pending step (2FA was disabled). */
  drop(user: UserRecord): void {
    this.byUser.delete(user.id);
  }

  private record(user: UserRecord): AuthorizationRecord {
    let record = this.byUser.get(user.id);
    if (!record) this.byUser.set(user.id, (record = { userId: user.id, grantedUntil: null }));
    return record;
  }

  // ---- persistence ----

  save(): AuthorizationRecord[] {
    return [...this.byUser.values()];
  }

  load(records: AuthorizationRecord[]): void {
    this.byUser = new Map(records.map((a) => [a.userId, a]));
  }
}
