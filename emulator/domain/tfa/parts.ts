import { Accounts } from "../accounts";
import { Clock } from "../clock";
import { Random } from "../random";
import { Authorizations } from "./authorizations";
import { BackupCodes } from "./backup-codes";
import { Challenges } from "./challenges";
import { TfaFaults } from "./faults";
import { Methods } from "./methods";
import { Outbox } from "./outbox";
import { SmsLog } from "./sms";

export interface TfaDeps {
  accounts: Accounts;
  clock: Clock;
  random: Random;
}

/**
 * Everything the 2FA rules work on: the marketplace's dependencies and one store per kind of record. The `Tfa`
 * facade builds a single set and hands it to each rule, so every rule sees the same state.
 */
export interface TfaParts extends TfaDeps {
  methods: Methods;
  challenges: Challenges;
  backupCodes: BackupCodes;
  authorizations: Authorizations;
  smsLog: SmsLog;
  outbox: Outbox;
  faults: TfaFaults;
}
