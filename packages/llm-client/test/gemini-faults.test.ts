import { runFaultSuite } from "./openai-responses-fault-suite.ts";

runFaultSuite("gemini");
