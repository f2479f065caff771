package eu.arrowhead.eventhandler.bench;

import java.util.Arrays;

/**
 * The ids a subscriber received held against the ids the publishers were answered.
 *
 * @param delivered  accepted events received at least once
 * @param lost       accepted events never received
 * @param duplicated receipts beyond the first
 * @param outOfOrder receipts of a lower id than the one before
 */
record IdDelivery(long delivered, long lost, long duplicated, long outOfOrder) {

    /** @param received the ids in the order they arrived */
    static IdDelivery of(long[] accepted, long[] received) {
        long[] sortedAccepted = accepted.clone();
        Arrays.sort(sortedAccepted);
        long outOfOrder = 0;
        for (int i = 1; i < received.length; i++) {
            outOfOrder += received[i] < received[i - 1] ? 1 : 0;
        }
        long[] distinct = Arrays.stream(received).sorted().distinct().toArray();
        long delivered = Arrays.stream(distinct).filter(id -> Arrays.binarySearch(sortedAccepted, id) >= 0)
                .count();
        return new IdDelivery(delivered, sortedAccepted.length - delivered, received.length - distinct.length,
                outOfOrder);
    }

    boolean clean() {
        return lost == 0 && duplicated == 0 && outOfOrder == 0;
    }
}
