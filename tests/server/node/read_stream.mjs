// Reads rxagent's UI message stream with the npm `ai` package, as a `useChat` client would.
//
//   node read_stream.mjs <url> [prompt] [chat-id]
//
// POSTs the body `useChat` sends (DefaultChatTransport: {id, messages, trigger, messageId}) to
// <url>, parses the answer with parseJsonEventStream + uiMessageChunkSchema (exactly what
// DefaultChatTransport does), assembles it with readUIMessageStream, and prints the final
// UIMessage on stdout as JSON: {"message": UIMessage, "errors": [{name, message}]}, where
// `errors` holds what readUIMessageStream reported (an `error` chunk of a failed run, or a
// protocol break such as a delta without its start). The message is then checked with
// validateUIMessages and convertToModelMessages, as a server would when the chat continues.
// Set RXAGENT_TOKEN to send a bearer token.
// Exit codes: 0 ok; 1 bad usage or HTTP error; 2 no message, or a message the SDK rejects.
import {
  convertToModelMessages,
  parseJsonEventStream,
  readUIMessageStream,
  uiMessageChunkSchema,
  validateUIMessages,
} from "ai";

const [url, prompt = "What is the weather in Paris?", chatId = `chat-${Date.now()}`] =
  process.argv.slice(2);
if (!url) {
  console.error("usage: node read_stream.mjs <url> [prompt] [chat-id]");
  process.exit(1);
}

const body = {
  id: chatId,
  messages: [{ id: `msg-${Date.now()}`, role: "user", parts: [{ type: "text", text: prompt }] }],
  trigger: "submit-message",
  messageId: undefined,
};
const headers = { "content-type": "application/json" };
if (process.env.RXAGENT_TOKEN) headers.authorization = `Bearer ${process.env.RXAGENT_TOKEN}`;

const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
if (!response.ok || !response.body) {
  console.error(`HTTP ${response.status}: ${await response.text()}`);
  process.exit(1);
}
const protocol = response.headers.get("x-vercel-ai-ui-message-stream");
if (protocol !== "v1") {
  console.error(`expected the header x-vercel-ai-ui-message-stream: v1, got ${protocol}`);
  process.exit(2);
}

const chunks = parseJsonEventStream({ stream: response.body, schema: uiMessageChunkSchema })
  .pipeThrough(
    new TransformStream({
      transform(result, controller) {
        if (!result.success) throw result.error; // a chunk the schema rejects
        controller.enqueue(result.value);
      },
    }),
  );

const errors = [];
let message;
for await (const snapshot of readUIMessageStream({
  stream: chunks,
  onError: (error) => errors.push({ name: error?.name ?? "Error", message: String(error?.message ?? error) }),
})) {
  message = snapshot;
}
if (message === undefined) {
  console.error("the stream held no message");
  process.exit(2);
}
try {
  await validateUIMessages({ messages: [body.messages[0], message] });
  await convertToModelMessages([body.messages[0], message]);
} catch (error) {
  console.error(`the SDK rejects the message: ${error?.message ?? error}`);
  console.error(JSON.stringify(message));
  process.exit(2);
}
console.log(JSON.stringify({ message, errors }));
