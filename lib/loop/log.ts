/** What a tick says as it goes: one plain line per step, to stderr, so stdout stays for data. */
export interface Log {
  step(message: string): void;
}

export const stderrLog: Log = {
  step(message) {
    console.error(`relay: ${message}`);
  },
};

export const silentLog: Log = { step() {} };
