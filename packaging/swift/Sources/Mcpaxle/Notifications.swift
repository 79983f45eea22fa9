// Subscriptions as an AsyncSequence, over the generated McpSubscription (Sources/McpaxleFFI).
// Hand-written; like the rest of this package it is built by the release workflow on macOS only,
// never compiled on the Linux machine of `make test`.
import McpaxleFFI

/// The change notifications of a subscription (`client.subscribe(filterJson:)`), each the JSON
/// text of `{"method", "params"}`, until the server ends the subscription:
///
/// ```swift
/// let subscription = try await client.subscribe(filterJson: #"{"toolsListChanged": true}"#)
/// for try await notification in subscription.notifications {
///     print(notification)
/// }
/// ```
///
/// Breaking out of the loop leaves the listen stream open: call `subscription.unsubscribe()`.
public struct McpNotifications: AsyncSequence, Sendable {
    public typealias Element = String

    public let subscription: McpSubscription

    public init(_ subscription: McpSubscription) {
        self.subscription = subscription
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let subscription: McpSubscription

        public mutating func next() async throws -> String? {
            try await subscription.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(subscription: subscription)
    }
}

extension McpSubscription {
    /// This subscription's notifications as an `AsyncSequence`.
    public var notifications: McpNotifications { McpNotifications(self) }
}
