import { describe, expect, it } from "vitest";
import { findReserialised } from "./reserialised";

describe("findReserialised: values stored in another written form than the file's", () => {
  it("lists numbers whose stored form differs, with the path and both forms", () => {
    const text = JSON.stringify({ a: 1 }).replace("1", "25.00").replace("}", ', "b": [1e2, 3, -0, 0.5], "c": 12345678901234567890}');
    expect(JSON.parse(text)).toBeTruthy();
    expect(findReserialised(text, { lines: false })).toEqual([
      { path: "a", characters: 5, reason: "re-serialised: 25.00 stored as 25" },
      { path: "b[]", characters: 5, reason: "re-serialised: 2 values here, e.g. 1e2 stored as 100" },
      { path: "c", characters: 20, reason: "re-serialised: 12345678901234567890 stored as 12345678901234567000" },
    ]);
  });

  it("leaves canonical numbers, strings that hold numbers, whitespace and escapes alone", () => {
    expect(findReserialised('{ "price" : "25.00", "n": 25, "x": -1.5e-7, "t": "caf\\u00e9 1.0", "ok": true, "z": null }\n', { lines: false })).toEqual([]);
  });

  it("JSON Lines records sit under [], and JSON text in a string is read when the import stored it parsed (tool arguments)", () => {
    const call = JSON.stringify({ name: "pay" }).replace("}", ',"arguments":{"amount":25.00}}');
    const line = JSON.stringify({ tool_call: call, content: '{"said": 1.0}' });
    const text = `${line}\n${line}\n`;
    expect(findReserialised(text, { lines: true, parsedJson: new Set([call]) })).toEqual([
      { path: "[].tool_call.arguments.amount", characters: 10, reason: "re-serialised: 2 values here, e.g. 25.00 stored as 25" },
    ]);
    // Stored as the text it is: nothing re-serialised.
    expect(findReserialised(text, { lines: true })).toEqual([]);
  });

  it("lists an integer-like key moved first and a key written twice", () => {
    expect(findReserialised('{"meta": {"b": 1, "2": 0}, "m": {"1": 0, "3": 1}, "d": {"a": 1, "a": 2}}', { lines: false })).toEqual([
      { path: "meta.2", characters: 3, reason: 're-serialised: key "2" stored before the keys written ahead of it (integer-like keys come first)' },
      { path: "d.a", characters: 3, reason: 're-serialised: key "a" written twice in one object, only its last value stored' },
    ]);
  });
});
