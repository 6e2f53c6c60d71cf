import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, EmptyBody } from '../../schemas/common.js'
import { ChatCommand, CreateCommandBody, IdParams, UpdateCommandBody } from '../../schemas/chat.js'
import { ImportBody, ImportResult } from '../../schemas/chat-bot.js'
import { chatErrors as errors, tags, type ChatContext } from './context.js'
import { planImport } from './import-rules.js'

/** Custom bot commands: anyone lists them, moderators manage them. */
const commands: FastifyPluginAsyncTypebox<{ chat: ChatContext }> = async (fastify, { chat }) => {
  const { repo } = chat

  fastify.get('/commands', {
    schema: { tags, summary: 'Custom commands', response: { 200: Type.Object({ data: Type.Array(ChatCommand) }), ...errors } }
  }, async () => ({ data: await repo.commands() }))

  fastify.post('/commands', {
    schema: { tags, summary: 'Create a custom command (moderator)', body: CreateCommandBody, response: { 201: ChatCommand, ...errors } }
  }, async (request, reply) => {
    await chat.requireRole(request, 'moderator')
    const { command, event } = await repo.createCommand({ ...request.body, command: request.body.command.trim(), response: request.body.response.trim() })
    await chat.publish([event])
    return reply.status(201).header('location', `${request.url.replace(/\/$/, '')}/${command.id}`).send(command)
  })

  fastify.post('/commands/import', {
    schema: {
      tags,
      summary: 'Import commands from a Nightbot or StreamElements export; existing triggers are kept unless "replace" (moderator)',
      body: ImportBody,
      response: { 200: ImportResult, ...errors }
    }
  }, async (request) => {
    await chat.requireRole(request, 'moderator')
    const plan = planImport(request.body.format, request.body.commands)
    const { imported, skipped, events } = await repo.importCommands(plan.commands, request.body.replace ?? false)
    await chat.publish(events)
    return { imported, skipped: [...plan.skipped, ...skipped], warnings: plan.warnings }
  })

  fastify.get('/commands/:id', {
    schema: { tags, summary: 'A custom command', params: IdParams, response: { 200: ChatCommand, ...errors } }
  }, async (request) => await repo.command(request.params.id))

  fastify.patch('/commands/:id', {
    schema: { tags, summary: 'Update a command (moderator)', params: IdParams, body: UpdateCommandBody, response: { 200: ChatCommand, ...errors } }
  }, async (request) => {
    await chat.requireRole(request, 'moderator')
    const change = { ...request.body, command: request.body.command?.trim(), response: request.body.response?.trim() }
    const { command, event } = await repo.updateCommand(request.params.id, change)
    await chat.publish([event])
    return command
  })

  fastify.delete('/commands/:id', {
    schema: { tags, summary: 'Delete a command (moderator)', params: IdParams, response: { 204: EmptyBody, ...errors } }
  }, async (request, reply) => {
    await chat.requireRole(request, 'moderator')
    await chat.publish([await repo.deleteCommand(request.params.id)])
    return reply.status(204).send(undefined)
  })
}

export default commands
