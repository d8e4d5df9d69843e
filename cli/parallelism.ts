/**
 * Resource operations the engine runs at once. Its default is 4 x the machine's cores (8 on a 2-core runner),
 * and an `Instance` holds its slot for its whole boot, so a program of more instances than that boots in waves.
 * Operations against the service are network waits in one provider process: what fits a program is one slot per
 * resource. A fresh stack's count is not known before its first up: 64 then, more than a program boots at once
 * unless it declares that many instances (a GpuFleet of any size is one resource).
 */
export const FRESH_STACK_PARALLEL = 64;

/** Unless `--parallel` says otherwise: every resource the stack holds, at least FRESH_STACK_PARALLEL. */
export function parallelismFor(resourceCount: number): number {
  return Math.max(FRESH_STACK_PARALLEL, resourceCount);
}
