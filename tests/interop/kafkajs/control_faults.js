// A Node.js suite scripting faults at run time through the control endpoint of
// `mockkafka serve` (documented in docs/scenarios.md, "Live control from other languages").
//
//   node control_faults.js BOOTSTRAP CONTROL_URL TOPIC
//
// 1. a fault: the next two Produce requests answer NOT_LEADER_OR_FOLLOWER -- kafkajs retries;
// 2. a verb: the leader of partition 0 moves to the next replica -- kafkajs follows it;
// 3. a wait: until the broker has answered 4 Produce requests;
// then prints one JSON line with what it saw.
const { Kafka, logLevel } = require("kafkajs");

const [bootstrap, control, topic] = process.argv.slice(2);

async function call(method, path, body) {
  const res = await fetch(control + path, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${json.error}`);
  return json;
}

async function main() {
  const kafka = new Kafka({ brokers: bootstrap.split(","), logLevel: logLevel.NOTHING,
                            retry: { initialRetryTime: 50, retries: 8 } });
  const producer = kafka.producer();
  await producer.connect();

  await call("POST", "/steps", {
    fault: { name: "js-fault", on: "Produce", times: 2, error: "NOT_LEADER_OR_FOLLOWER" },
  });
  await producer.send({ topic, messages: [{ key: "a", value: "first", partition: 0 }] });
  const fired = (await call("GET", "/faults")).find((r) => r.name === "js-fault").fired;

  await call("POST", "/steps", { move_leader: { topic, partition: 0, to: "next" } });
  await producer.send({ topic, messages: [{ key: "b", value: "second", partition: 0 }] });
  await call("POST", "/wait", { after: { requests: { api: "Produce", count: 4 } }, timeout: "10s" });

  // a mistake gets the message a Python test would get
  let mistake = "";
  try {
    await call("POST", "/steps", { move_leader: { topic, partition: 0, too: 2 } });
  } catch (e) {
    mistake = e.message;
  }
  const state = await call("GET", "/state");
  await producer.disconnect();
  console.log(JSON.stringify({ fired, partition0: state.topics[topic][0], mistake }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
