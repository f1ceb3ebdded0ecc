// The Java Admin client's share-group offset calls (kafka-clients 4.1+: listShareGroupOffsets,
// alterShareGroupOffsets, deleteShareGroupOffsets, deleteShareGroups) against mockkafka, for
// tests/interop/test_java_share_groups.py. Arguments: bootstrap topic group. Prints one JSON
// object on its last stdout line and exits 0, or prints the exception and exits 1.

import java.util.*;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.common.TopicPartition;

public final class ShareAdmin {
  public static void main(String[] args) throws Exception {
    try {
      System.out.println(Interop.json(run(args[0], args[1], args[2])));
      System.exit(0);
    } catch (Throwable t) {
      t.printStackTrace();
      System.exit(1);
    }
  }

  static Map<String, Object> offsets(Admin admin, String group) throws Exception {
    Map<String, Object> out = new TreeMap<>();
    Map<TopicPartition, SharePartitionOffsetInfo> got = admin
        .listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
        .partitionsToOffsetInfo(group).get();
    for (Map.Entry<TopicPartition, SharePartitionOffsetInfo> e : got.entrySet()) {
      SharePartitionOffsetInfo i = e.getValue();
      out.put(String.valueOf(e.getKey().partition()),
          i == null ? null : List.of(i.startOffset(), i.lag().orElse(-99L)));
    }
    return out;
  }

  static String failure(Runnable call) {
    try {
      call.run();
      return "none";
    } catch (RuntimeException e) {
      Throwable c = e.getCause() instanceof ExecutionException ? e.getCause().getCause() : e.getCause();
      return (c == null ? e : c).getClass().getSimpleName();
    }
  }

  static Map<String, Object> run(String boot, String topic, String group) throws Exception {
    Map<String, Object> out = new TreeMap<>();
    try (Admin admin = Admin.create(Interop.base(boot))) {
      out.put("before", offsets(admin, group));
      admin.alterShareGroupOffsets(group, Map.of(new TopicPartition(topic, 0), 0L)).all().get();
      out.put("after_alter", offsets(admin, group));
      admin.deleteShareGroupOffsets(group, Set.of(topic)).all().get();
      out.put("after_delete", offsets(admin, group));
      out.put("delete_unknown_group", failure(() -> {
        try {
          admin.deleteShareGroupOffsets("no-such-group", Set.of(topic)).all().get();
        } catch (Exception e) {
          throw new RuntimeException(e);
        }
      }));
      admin.deleteShareGroups(List.of(group)).all().get();
      out.put("groups_after", admin.listGroups().all().get().stream()
          .map(GroupListing::groupId).filter(group::equals).count());
    }
    return out;
  }
}
