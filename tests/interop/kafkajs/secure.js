// kafkajs over TLS / SASL against a mockkafka cluster, with the options
// `cluster.client_config("kafkajs")` gives (a JSON file).
// Usage: node secure.js CONFIG.json TOPIC GROUP COUNT   -> one JSON line:
//   {"acked": N, "seen": [...]} after producing and consuming COUNT messages in a group, or
//   {"error": "<kafkajs error name>", "type": "<broker error type>"} when the client is refused.
const fs = require("fs");
const { consumeAll } = require("./consume");
const { Kafka, logLevel } = require("kafkajs");

async function main() {
  const [configPath, topic, group, countText] = process.argv.slice(2);
  const count = Number(countText);
  const options = JSON.parse(fs.readFileSync(configPath, "utf8"));
  const kafka = new Kafka({
    clientId: "kafkajs-secure",
    logLevel: logLevel.NOTHING,
    retry: { retries: 2, initialRetryTime: 50 },
    connectionTimeout: 5000,
    ...options,
  });

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  try {
    await producer.connect();
  } catch (err) {
    const cause = err.cause || err;
    return { error: err.name, type: cause.type || cause.name || String(cause.message) };
  }
  const messages = [];
  for (let i = 0; i < count; i++) messages.push({ value: `s${i}` });
  const acks = await producer.send({ topic, messages, acks: -1 });
  await producer.disconnect();

  const seen = await consumeAll(kafka, topic, group, count);
  return { acked: acks.length > 0 ? count : 0, seen };
}

main().then(
  (result) => {
    console.log(JSON.stringify(result));
    process.exit(0);
  },
  (err) => {
    console.error(err && err.stack ? err.stack : String(err));
    process.exit(1);
  }
);
