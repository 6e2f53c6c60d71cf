import { Type, IssueRef } from './common.js'

export const Dependency = Type.Object({ blocking: IssueRef, blocked: IssueRef })

export const DependencyList = Type.Object({ dependencies: Type.Array(Dependency) })
