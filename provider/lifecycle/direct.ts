import { ConfigSource, REAL_TIME, spendCapOf } from "../../sdk";
import type { DiffLook, Imported, Kind, Operation, Props } from "./kind";
import type { CheckFailure } from "./spec";

/**
 * A kind's functions called directly, without a provider (tests, scripts): the inputs parsed once, as the
 * provider parses them, and the operation's defaults filled in (real time, no progress lines, the spend cap of
 * `config` when given).
 */
export type DirectOptions = Pick<Operation, "client"> & Partial<Omit<Operation, "client">> & { config?: ConfigSource };

export function direct<S, O extends object>(kind: Kind<S, O>) {
  return {
    check(news: Props, unknown?: unknown, name?: string): { inputs: Record<string, unknown>; failures: CheckFailure[] } {
      return kind.check ? kind.check(news, { name, unknown }) : { inputs: { ...news }, failures: kind.spec.check(news, unknown) };
    },
    diff: (olds: Props, news: Props, unknown?: unknown, look?: DiffLook) => kind.diff(olds, news, unknown, look),
    warnings: async (news: Props, options: DirectOptions, unknown?: unknown): Promise<string[]> => (kind.warnings ? kind.warnings(news, unknown, operation(options)) : []),
    refusals: async (news: Props, options: DirectOptions, unknown?: unknown): Promise<CheckFailure[]> => (kind.refusals ? kind.refusals(news, unknown, operation(options)) : []),
    create: async (input: unknown, options: DirectOptions) => kind.create(kind.spec.parse(input), operation(options)),
    adopt: async (id: string, input: unknown, options: DirectOptions) => kind.adopt(id, kind.spec.parse(input), operation(options)),
    read: (id: string, props: Props, options: DirectOptions) => kind.read(id, props, operation(options)),
    import: (id: string, options: DirectOptions): Promise<Imported | null> => kind.import(id, operation(options)),
    async update(id: string, olds: Props, input: unknown, options: DirectOptions) {
      if (!kind.update) throw new Error(`${kind.description.name} has no update: every change replaces it.`);
      return kind.update(id, olds, kind.spec.parse(input), operation(options));
    },
    delete: (id: string, options: DirectOptions, props: Props = {}) => kind.delete(id, props, operation(options)),
  };
}

function operation({ config, ...options }: DirectOptions): Operation {
  return { clock: REAL_TIME, log: () => undefined, spendCap: () => (config ? spendCapOf(config) : undefined), ...options };
}
