// Java kafka-clients share consumers driven by tests/interop/test_java_share_groups.py against
// mockkafka: 4.0.x (KIP-932 early access, the v0 share APIs) and 4.4.0 (GA, ShareFetch v2).
// Prints one JSON object on its last stdout line and exits 0, or prints the exception and
// exits 1. Every loop is bounded by a deadline.

import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;

public final class ShareInterop {
  public static void main(String[] args) throws Exception {
    try {
      System.out.println(Interop.json(share(args[0], args[1], args[2], Integer.parseInt(args[3]))));
      System.exit(0);
    } catch (Throwable t) {
      t.printStackTrace();
      System.exit(1);
    }
  }

  static KafkaShareConsumer<String, String> consumer(String boot, String group, String name) {
    Properties p = Interop.base(boot);
    p.put("client.id", name);
    p.put("group.id", group);
    p.put("share.acknowledgement.mode", "explicit");  // 4.1+ (4.0.x: explicit on first use)
    p.put("key.deserializer", StringDeserializer.class.getName());
    p.put("value.deserializer", StringDeserializer.class.getName());
    return new KafkaShareConsumer<>(p);
  }

  // Two share consumers of one group read `n` plain records plus "release-me" (released on
  // its first delivery, accepted on the second) and "reject-me" (rejected: never again).
  static Map<String, Object> share(String boot, String topic, String group, int n)
      throws Exception {
    Map<String, Object> out = new TreeMap<>();
    try (Admin admin = Admin.create(Interop.base(boot))) {
      ConfigResource res = new ConfigResource(ConfigResource.Type.GROUP, group);
      AlterConfigOp op = new AlterConfigOp(
          new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET);
      admin.incrementalAlterConfigs(Map.of(res, List.of(op))).all().get();
    }
    List<KafkaShareConsumer<String, String>> consumers = List.of(
        consumer(boot, group, "share-a"), consumer(boot, group, "share-b"));
    Map<String, List<String>> seen = new TreeMap<>();
    List<Integer> releaseCounts = new ArrayList<>();
    int rejectDeliveries = 0, accepted = 0, maxPlainDeliveryCount = 0;
    try {
      for (KafkaShareConsumer<String, String> c : consumers) c.subscribe(List.of(topic));
      long deadline = System.currentTimeMillis() + 60_000;
      long quietUntil = Long.MAX_VALUE;
      while (System.currentTimeMillis() < Math.min(deadline, quietUntil)) {
        for (int i = 0; i < consumers.size(); i++) {
          KafkaShareConsumer<String, String> c = consumers.get(i);
          String name = i == 0 ? "a" : "b";
          for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
            int count = r.deliveryCount().map(Short::intValue).orElse(-1);
            if (r.value().equals("release-me")) {
              releaseCounts.add(count);
              if (count == 1) { c.acknowledge(r, AcknowledgeType.RELEASE); continue; }
            }
            if (r.value().equals("reject-me")) {
              rejectDeliveries++;
              c.acknowledge(r, AcknowledgeType.REJECT);
              continue;
            }
            c.acknowledge(r, AcknowledgeType.ACCEPT);
            accepted++;
            if (r.value().startsWith("v")) maxPlainDeliveryCount = Math.max(maxPlainDeliveryCount, count);
            seen.computeIfAbsent(name, k -> new ArrayList<>()).add(r.value());
          }
          c.commitSync(Duration.ofSeconds(10));
        }
        if (accepted >= n + 1 && quietUntil == Long.MAX_VALUE) {
          quietUntil = System.currentTimeMillis() + 1500;  // would anything come again?
        }
      }
      try (Admin admin = Admin.create(Interop.base(boot))) {
        ShareGroupDescription d =
            admin.describeShareGroups(List.of(group)).describedGroups().get(group).get();
        out.put("described_members", d.members().size());
        out.put("described_state", d.groupState().toString());
      }
    } finally {
      for (KafkaShareConsumer<String, String> c : consumers) c.close(Duration.ofSeconds(10));
    }
    out.put("seen", seen);
    out.put("release_delivery_counts", releaseCounts);
    out.put("reject_deliveries", rejectDeliveries);
    out.put("accepted", accepted);
    out.put("max_plain_delivery_count", maxPlainDeliveryCount);
    return out;
  }
}
