import assert from "node:assert/strict";
import { formatDuration, MAX_DURATION_MS, parseDuration } from "../lib/config/duration.ts";

Deno.test("parseDuration() reads a number as seconds", () => {
  assert.equal(parseDuration(90), 90_000);
  assert.equal(parseDuration(1.5), 1_500);
});

Deno.test("parseDuration() reads unit strings and their combinations", () => {
  assert.equal(parseDuration("90s"), 90_000);
  assert.equal(parseDuration("45m"), 2_700_000);
  assert.equal(parseDuration("2h"), 7_200_000);
  assert.equal(parseDuration("1h30m"), 5_400_000);
  assert.equal(parseDuration("1h0m5s"), 3_605_000);
  assert.equal(parseDuration(" 10m "), 600_000);
  assert.equal(parseDuration("120"), 120_000);
});

Deno.test("parseDuration() rejects malformed strings with a message showing the accepted forms", () => {
  for (const bad of ["", "abc", "5x", "30m1h", "1.5h", "-5s", "1h 30m", "m"]) {
    assert.throws(
      () => parseDuration(bad),
      (e: Error) => e.message.includes(JSON.stringify(bad)) && e.message.includes('"1h30m"'),
      bad,
    );
  }
});

Deno.test("parseDuration() rejects zero, negative, non-finite and over-24h values", () => {
  assert.throws(() => parseDuration(0), /longer than zero/);
  assert.throws(() => parseDuration("0s"), /longer than zero/);
  assert.throws(() => parseDuration(-3), /longer than zero/);
  assert.throws(() => parseDuration(Number.NaN), /longer than zero/);
  assert.throws(() => parseDuration("25h"), /longest allowed is 24h/);
  assert.equal(parseDuration("24h"), MAX_DURATION_MS);
});

Deno.test("formatDuration() writes the shortest form parseDuration() reads back", () => {
  assert.equal(formatDuration(5_400_000), "1h30m");
  assert.equal(formatDuration(600_000), "10m");
  assert.equal(formatDuration(90_000), "1m30s");
  assert.equal(formatDuration(3_600_000), "1h");
  for (const ms of [1_000, 59_000, 3_661_000, MAX_DURATION_MS]) {
    assert.equal(parseDuration(formatDuration(ms)), ms);
  }
});
