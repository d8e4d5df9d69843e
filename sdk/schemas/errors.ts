import { z } from "zod";

/** Every error body of the service is an object with `msg`; most add an `error` code. */
export const ErrorBody = z.looseObject({
  success: z.literal(false).optional(),
  error: z.string().optional(),
  msg: z.string(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;
