/**
 * What the data layer throws when a request cannot be carried out. The one error handler maps
 * each to its status (docs/api.md, "Conventions"); the message is for the client.
 */
export class DomainError extends Error {
  constructor (message: string, readonly statusCode: 400 | 403 | 404 | 409 | 410 | 502 | 503 | 504) {
    super(message)
    this.name = new.target.name
  }
}

/** The thing does not exist, or the caller may not know that it does (404). */
export class NotFound extends DomainError {
  constructor (message: string) { super(message, 404) }
}

/** It exists already, or would clash with what exists (409). */
export class Conflict extends DomainError {
  constructor (message: string) { super(message, 409) }
}

/** The request is well-formed but cannot be carried out as asked (400). */
export class Invalid extends DomainError {
  constructor (message: string) { super(message, 400) }
}

/** It existed but is used up or expired (410): a one-use link. */
export class Gone extends DomainError {
  constructor (message: string) { super(message, 410) }
}

/** The caller may see the thing but not do this to it (403). */
export class Forbidden extends DomainError {
  constructor (message: string) { super(message, 403) }
}

/** An issue host refused or could not be reached, so nothing was changed (502; 504 when it timed out). */
export class HostUnavailable extends DomainError {
  constructor (message: string, timedOut = false) { super(message, timedOut ? 504 : 502) }
}

/** A stored secret this server cannot open (SECRET_KEY is not the key it was sealed with): 503, saying so. */
export class SecretUnreadable extends DomainError {
  constructor (message: string) { super(message, 503) }
}
