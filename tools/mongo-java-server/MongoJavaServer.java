import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * Starts mongo-java-server in memory on 127.0.0.1 and the given port (0: one the system picks),
 * prints `listening on PORT` once it accepts connections, and runs until stdin closes or it is
 * signalled. Stopping at stdin's end means a server started by a test run never outlives that run.
 *
 * The library's own main binds the fixed port 27017, which parallel test runs would share, and
 * every version it offers announces wire version 8 or lower, while the Node.js driver refuses
 * servers below 9 (MongoDB 4.4). So this one announces MongoDB 4.4, the oldest the driver takes.
 */
public final class MongoJavaServer {
  private static final MongoVersion MONGO_4_4 = new MongoVersion() {
    @Override public List<Integer> getVersionArray() { return List.of(4, 4, 0); }
    @Override public int getWireVersion() { return 9; }
  };

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: mongo-java-server PORT   (0: a free port, printed as `listening on PORT`)");
      System.exit(2);
    }
    MongoServer server = new MongoServer(new MemoryBackend().version(MONGO_4_4));
    server.bind(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[0])));
    Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
    System.out.println("listening on " + server.getLocalAddress().getPort());
    System.out.flush();
    while (System.in.read() != -1) {
      // Input is ignored; only its end matters.
    }
    System.exit(0);
  }
}
