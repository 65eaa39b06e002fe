/** `metadata.event_type` of every message we post; its payload carries the operation key. */
export const SLACK_EVENT_TYPE = 'singleshot_notification';
