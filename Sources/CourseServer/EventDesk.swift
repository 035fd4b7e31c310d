import ClientTarget
import Foundation
import Hummingbird
import Synchronization
import SyncClient

/// Takes the learner events serve's pages post to `CourseServer.eventsPath` (see `EventScript`):
/// `{"page": PATH, "events": [{name, timestamp, data}]}`, with the checks answers get (the run's
/// secret, same origin, JSON, a size limit read as the body arrives). The course and the block
/// come from the page's path, not from the body: a page records events of its own block only.
/// Each event goes into its course's bounded events journal with an id serve makes.
final class EventDesk: Sendable {
    let secret: ServeSecret
    let host: ServedHost
    let limits: CourseServer.Limits
    let space: LMSURLSpace
    private let indexes = Mutex<[String: Outbox.Index]>([:])

    /// The names the plugin's events endpoint takes (its `EVENT_NAMES`), as the LMS's own pages
    /// emit them for these actions.
    static let names: Set<String> = [
        "problem_check", "problem_show", "problem_reset", "load_video", "play_video", "pause_video", "seek_video",
        "speed_change_video", "stop_video", "complete_video", "show_transcript", "hide_transcript",
        "edx.ui.lms.sequence.tab_selected", "edx.ui.lms.link_clicked", "page_view",
    ]
    /// Events one POST may carry; the page sends them in smaller batches.
    static let eventsPerPost = 100

    init(secret: ServeSecret, host: ServedHost, limits: CourseServer.Limits, space: LMSURLSpace) {
        self.secret = secret
        self.host = host
        self.limits = limits
        self.space = space
    }

    struct Posted: Decodable {
        struct Event: Decodable {
            var name: String
            var timestamp: String
            var data: JSONValue?
        }

        var page: String
        var events: [Event]
    }

    func events(_ request: Request) async -> Response {
        if let refusal = AnswerDesk.refusal(of: request, secret: secret, host: host, limit: limits.eventBytes, what: "a batch of events", whats: "events") {
            return CourseServer.json(refusal.status, ["error": refusal.reason])
        }
        let body: ByteBuffer
        do {
            body = try await AnswerDesk.collect(request, upTo: limits.eventBytes, within: limits.bodySeconds, what: "a batch of events")
        } catch let error as AnswerDesk.BodyError {
            return CourseServer.json(error.status, ["error": error.reason])
        } catch {
            return CourseServer.json(.badRequest, ["error": "the events could not be read: \(error)"])
        }
        return record(Data(body.readableBytesView))
    }

    func record(_ data: Data) -> Response {
        let posted: Posted
        do {
            posted = try JSONDecoder().decode(Posted.self, from: data)
        } catch {
            return CourseServer.json(.badRequest, ["error": "not a batch of events {page, events: [{name, timestamp, data}]}: \(error)"])
        }
        guard let place = space.page(at: posted.page) else {
            return CourseServer.json(.notFound, ["error": "\(posted.page.prefix(200)) is not a page of an installed course"])
        }
        let entries: [EventEntry]
        do {
            entries = try Self.entries(posted, usageID: place.usageID)
        } catch {
            return CourseServer.json(.badRequest, ["error": error.reason])
        }
        let outbox = EventOutbox(folder: SyncClient.stateFolder(of: place.courseRoot))
        let quota = limits.events
        let outcome: Result<Int, OutboxError> = indexes.withLock { indexes in
            var index = indexes[outbox.path] ?? Outbox.Index()
            defer { indexes[outbox.path] = index }
            return Result { () throws(OutboxError) in try outbox.add(entries, quota: quota, index: &index) }
        }
        switch outcome {
        case .success(let dropped):
            // A page view is also an opening: the block's completion reaches an LMS without the
            // plugin's events endpoint, and the block is evicted last.
            if let usageID = place.usageID, let view = entries.last(where: { $0.name == "page_view" }) {
                _ = try? ClientTarget(root: space.root).markOpened(usageID, at: Outbox.parseTimestamp(view.timestamp) ?? Date())
            }
            return CourseServer.json(.created, ["recorded": String(entries.count), "dropped": String(dropped)])
        case .failure(.full(_, let reason)):
            return CourseServer.json(CourseServer.insufficientStorage, ["error": "this course's events journal is full: \(reason)"])
        case .failure(let error):
            return CourseServer.json(.internalServerError, ["error": "\(error)"])
        }
    }

    struct Invalid: Error {
        let reason: String
    }

    /// The journal's entries for a posted batch, each checked: a known name, an ISO 8601 time,
    /// a small JSON object. A video event's `id` is the block's, whatever the page said.
    static func entries(_ posted: Posted, usageID: String?) throws(Invalid) -> [EventEntry] {
        guard posted.events.count <= eventsPerPost else { throw Invalid(reason: "\(posted.events.count) events, over the limit of \(eventsPerPost) a request") }
        return try posted.events.map { event throws(Invalid) in
            guard names.contains(event.name) else { throw Invalid(reason: "\(event.name.prefix(100)) is not an event name the LMS takes") }
            guard event.timestamp.utf8.count <= 64, Outbox.parseTimestamp(event.timestamp) != nil else {
                throw Invalid(reason: "timestamp \(event.timestamp.prefix(64)) is not ISO 8601")
            }
            guard case .object(var data) = event.data ?? .object([:]), (event.data?.depth ?? 1) <= 6 else {
                throw Invalid(reason: "the data of \(event.name) must be a JSON object nested at most 6 deep")
            }
            if event.name.hasSuffix("_video"), let usageID {
                data["id"] = .string(LMSCourse.urlName(of: usageID))
                data["code"] = data["code"] ?? .string("html5")
            }
            let id = "\(event.timestamp)-\(event.name)-\(PostedAnswer.randomHex())"
            return EventEntry(id: id, name: event.name, usageID: usageID, timestamp: event.timestamp, data: .object(data))
        }
    }
}
