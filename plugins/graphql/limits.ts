import {
  GraphQLError, Kind, getNamedType, getNullableType, isListType, type ASTVisitor, type FragmentDefinitionNode, type GraphQLOutputType,
  type SelectionSetNode, type ValidationContext, type ValidationRule
} from 'graphql'
import { DEFAULT_PAGE } from './connections.js'

/** Documents deeper than this are refused (selection sets, fragments followed). */
export const MAX_DEPTH = 15
/** Aliased fields in one document. */
export const MAX_ALIASES = 100
/** Mutations in one operation: each may write up to 100 issues, and the request counts once against the rate limit. */
export const MAX_MUTATIONS = 10
/** Fields a document may ask for at most, each counted once per item of the lists it sits in. */
export const MAX_COMPLEXITY = 250_000

const limited = (message: string) => new GraphQLError(message, { extensions: { code: 'QUERY_TOO_COMPLEX' } })

/** Refuses a document with more than MAX_ALIASES aliases. */
export const aliasLimit: ValidationRule = (context: ValidationContext): ASTVisitor => {
  let count = 0
  return {
    Field (node) {
      if (node.alias !== undefined && ++count === MAX_ALIASES + 1) context.reportError(limited(`the document has more than ${MAX_ALIASES} aliases`))
    }
  }
}

/** Refuses a mutation operation with more than MAX_MUTATIONS mutations (aliased or not). */
export const mutationLimit: ValidationRule = (context: ValidationContext): ASTVisitor => ({
  OperationDefinition (node) {
    if (node.operation !== 'mutation') return
    let count = 0
    const fragments = new Map(context.getDocument().definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]))
    const walk = (set: SelectionSetNode, seen: Set<string>): void => {
      for (const sel of set.selections) {
        if (sel.kind === Kind.FIELD) count++
        else if (sel.kind === Kind.INLINE_FRAGMENT) walk(sel.selectionSet, seen)
        else if (!seen.has(sel.name.value)) {
          const frag = fragments.get(sel.name.value)
          if (frag !== undefined) walk(frag.selectionSet, new Set([...seen, sel.name.value]))
        }
      }
    }
    walk(node.selectionSet, new Set())
    if (count > MAX_MUTATIONS) context.reportError(limited(`the operation has ${count} mutations; at most ${MAX_MUTATIONS} run in one request`))
  }
})

const isConnection = (type: GraphQLOutputType) => getNamedType(type).name.endsWith('Connection')
const isList = (type: GraphQLOutputType) => isListType(getNullableType(type))

/**
 * Fields that cost far more than one value: a description is up to 65,536 characters, an issue's
 * timeline reads all its events, a sprint's scope change runs the sprint's review. Each counts as
 * this many fields, so a document cannot ask for thousands of them at once.
 */
const WEIGHTS: Record<string, number> = {
  body: 1000, timelineItems: 200, scopeChange: 2000, sprintReview: 2000, issueLabelOptions: 1000, hasEstimatedIssues: 100
}

/**
 * Refuses a document whose estimated size passes MAX_COMPLEXITY: every field counts once per item
 * of each connection around it, a connection's items being its `first`/`last` (100 by default).
 * Plain lists (`issues(ids)`, `repositoriesByGhId`) count the items their list argument names, and
 * a few costly fields count as many (WEIGHTS).
 */
export const complexityLimit: ValidationRule = (context: ValidationContext): ASTVisitor => {
  const fragments = new Map<string, FragmentDefinitionNode>()
  for (const def of context.getDocument().definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def)
  const schema = context.getSchema()
  const cost = (set: SelectionSetNode, typeName: string, times: number, depth: number, seen: Set<string>): number => {
    if (depth > MAX_DEPTH + 2) return Number.POSITIVE_INFINITY
    const type = schema.getType(typeName)
    let total = 0
    for (const sel of set.selections) {
      // Past twice the bound (the total is halved at the end), nothing further can bring it back under.
      if (total > 2 * MAX_COMPLEXITY) return Number.POSITIVE_INFINITY
      if (sel.kind === Kind.FRAGMENT_SPREAD) {
        const frag = fragments.get(sel.name.value)
        if (frag === undefined || seen.has(frag.name.value)) continue
        total += cost(frag.selectionSet, frag.typeCondition.name.value, times, depth, new Set([...seen, frag.name.value]))
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        total += cost(sel.selectionSet, sel.typeCondition?.name.value ?? typeName, times, depth, seen)
      } else {
        total += times * (WEIGHTS[sel.name.value] ?? 1)
        if (sel.selectionSet === undefined || type === undefined || type === null || !('getFields' in type)) continue
        const field = type.getFields()[sel.name.value]
        if (field === undefined) continue
        let items = 1
        if (isConnection(field.type as GraphQLOutputType)) {
          const size = sel.arguments?.find((a) => a.name.value === 'first' || a.name.value === 'last')
          items = size?.value.kind === Kind.INT ? Math.max(1, Number(size.value.value)) : DEFAULT_PAGE
        } else if (isList(field.type as GraphQLOutputType)) {
          // A plain list (`issues(ids)`) holds as many items as its list argument names; from a variable, up to a page.
          const lists = (sel.arguments ?? []).map((a) => a.value.kind === Kind.LIST ? a.value.values.length : a.value.kind === Kind.VARIABLE ? DEFAULT_PAGE : 1)
          items = Math.max(1, ...lists)
        }
        total += cost(sel.selectionSet, getNamedType(field.type).name, times * items, depth + 1, seen)
      }
    }
    return total
  }
  return {
    OperationDefinition (node) {
      const root = node.operation === 'mutation' ? schema.getMutationType() : node.operation === 'subscription' ? schema.getSubscriptionType() : schema.getQueryType()
      if (root === null || root === undefined) return
      // Connections count their items, their edges and nodes count once more each: divide by 2.
      const total = cost(node.selectionSet, root.name, 1, 0, new Set()) / 2
      if (total > MAX_COMPLEXITY) context.reportError(limited(`the document is too complex (estimated over ${MAX_COMPLEXITY} fields); ask for smaller pages or fewer nested lists`))
    }
  }
}
