// kafkajs as an ACL-restricted SASL user: which admin and produce calls the broker refuses.
// Usage: node acls.js BOOTSTRAP USER PASSWORD MECHANISM   -> prints one JSON line mapping
// each call to "ok" or the Kafka error type kafkajs reports.
const { Kafka, logLevel } = require("kafkajs");

async function outcome(call) {
  try {
    await call();
    return "ok";
  } catch (err) {
    return kafkaType(err) || err.name;
  }
}

// The Kafka error type under kafkajs' wrappers (aggregate, retrier, cause).
function kafkaType(err) {
  if (!err) return null;
  if (err.type) return err.type;
  for (const inner of [err.originalError, err.cause, ...(err.errors || [])]) {
    const found = kafkaType(inner);
    if (found) return found;
  }
  return null;
}

async function main() {
  const [bootstrap, username, password, mechanism] = process.argv.slice(2);
  const kafka = new Kafka({
    clientId: "kafkajs-acls",
    brokers: bootstrap.split(","),
    sasl: { mechanism, username, password },
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
  });
  const admin = kafka.admin();
  await admin.connect();
  const out = {};
  out.createTopics = await outcome(() =>
    admin.createTopics({ topics: [{ topic: "fresh", numPartitions: 1 }] })
  );
  out.describeConfigs = await outcome(() =>
    admin.describeConfigs({ resources: [{ type: 2, name: "orders" }], includeSynonyms: false })
  );
  out.deleteTopics = await outcome(() => admin.deleteTopics({ topics: ["orders"] }));
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  out.produce = await outcome(() =>
    producer.send({ topic: "orders", messages: [{ value: "v" }], acks: -1 })
  );
  await producer.disconnect();
  console.log(JSON.stringify(out));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
