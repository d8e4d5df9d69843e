/** One-shot failures of the backing store, switched on through the control API. */
export interface TfaFaults {
  /** The next N add-method authorization checks answer 503 `service_unavailable`. */
  serviceUnavailable: number;
  /** The next N authorize-new-method code flows answer 500 `challenge_creation_failed`. */
  challengeCreationFailed: number;
}

/** Spends one fault of `kind` if any is left: true when the caller must fail now. */
export function takeFault(faults: TfaFaults, kind: keyof TfaFaults): boolean {
  if (faults[kind] <= 0) return false;
  faults[kind]--;
  return true;
}
