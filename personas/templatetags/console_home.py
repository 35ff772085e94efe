from django import template

from personas.admin.home import entry_points, task_groups

register = template.Library()
register.simple_tag(task_groups)
register.simple_tag(entry_points)
