// Shared by the kafkajs interop scripts: read `count` messages of `topic` in group `group`
// from the beginning (bounded: 20 s), commit, and return their values as strings.
async function consumeAll(kafka, topic, group, count) {
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10000, heartbeatInterval: 500 });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  const seen = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out with ${seen.length}`)), 20000);
    consumer
      .run({
        eachMessage: async ({ message }) => {
          seen.push(message.value.toString());
          if (seen.length >= count) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch(reject);
  });
  await consumer.commitOffsets([]); // flush auto-commit state
  await consumer.disconnect();
  return seen;
}

module.exports = { consumeAll };
