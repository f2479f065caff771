package eu.arrowhead.eventhandler.delivery;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.Executor;

/** Writer threads that run their tasks when the test says, on the test's thread: each step is one the test chose. */
final class ManualExecutor implements Executor {
    private final Deque<Runnable> tasks = new ArrayDeque<>();

    @Override
    public synchronized void execute(Runnable task) {
        tasks.add(task);
    }

    /** Runs the tasks waiting, and those they leave, until none is left; a task that throws fails the test. */
    int runAll() {
        int ran = 0;
        for (Runnable task; (task = next()) != null; ran++) {
            task.run();
        }
        return ran;
    }

    synchronized int waiting() {
        return tasks.size();
    }

    private synchronized Runnable next() {
        return tasks.poll();
    }
}
