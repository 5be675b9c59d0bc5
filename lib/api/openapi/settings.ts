import { connectionTestBody, connectionTestSchema, judgeSettingsSchema } from "@/lib/schemas/settings";
import { badRequest } from "./shared";
import type { Operation } from "./types";

export const settingsOperations: Operation[] = [
  {
    method: "get",
    path: "/settings/judge",
    operationId: "getJudgeSettings",
    summary: "The judge configuration in effect (never the key)",
    tag: "Settings",
    responses: { 200: { description: "Judge settings", schema: judgeSettingsSchema } },
  },
  {
    method: "post",
    path: "/settings/judge/test",
    operationId: "testJudgeConnection",
    summary: "Test the connection to the judge model with one small structured call",
    description: "Always 200: `ok` says whether the judge answered with a valid verdict, `message` says why not.",
    tag: "Settings",
    body: connectionTestBody,
    responses: { 200: { description: "The outcome", schema: connectionTestSchema }, 400: badRequest },
  },
];
