/**
 * Runs a benchmark's `main`: a bound it answers as missed (false) fails the command, as does an error, printed.
 */
export function runBench(main: () => Promise<boolean | void>): void {
  main().then(
    (met) => {
      if (met === false) process.exitCode = 1;
    },
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
