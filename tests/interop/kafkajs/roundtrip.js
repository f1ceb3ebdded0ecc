// kafkajs against a mockkafka cluster: admin, producer (gzip), consumer group, commit.
// Usage: node roundtrip.js BOOTSTRAP TOPIC GROUP COUNT   -> prints one JSON line.
const { consumeAll } = require("./consume");
const { Kafka, CompressionTypes, logLevel } = require("kafkajs");

async function main() {
  const [bootstrap, topic, group, countText] = process.argv.slice(2);
  const count = Number(countText);
  const kafka = new Kafka({
    clientId: "kafkajs-interop",
    brokers: bootstrap.split(","),
    logLevel: logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 50 },
  });
  const admin = kafka.admin();
  await admin.connect();
  const created = await admin.createTopics({
    topics: [{ topic, numPartitions: 3, replicationFactor: 3 }],
    waitForLeaders: true,
  });
  const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
  await admin.disconnect();

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const messages = [];
  for (let i = 0; i < count; i++) messages.push({ key: `k${i % 10}`, value: `v${i}` });
  await producer.send({ topic, messages, acks: -1, compression: CompressionTypes.GZIP });
  await producer.disconnect();

  const seen = await consumeAll(kafka, topic, group, count);
  console.log(
    JSON.stringify({ created, partitions: metadata.topics[0].partitions.length, seen })
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err && err.stack ? err.stack : String(err));
    process.exit(1);
  }
);
